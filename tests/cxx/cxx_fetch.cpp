// cxx_fetch.cpp — libweights used from C++ (compiled with c++, linked against
// libweights.so): the version, a client, one rank's manifest, and fetches into
// the host sink, into an engine-style sink written in C++ (its own wt_sink_ops
// table) and into a safetensors file that tests/integration/cxx_link.sh compares
// with `weightctl shard`. Every byte handed to a sink passed its hash check.
//
//   cxx_fetch URL MODEL TP_SIZE TP_RANK OUT.safetensors
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <weights/api.h>
#include <weights/client.h>
#include <weights/dtype.h>
#include <weights/engine.h>
#include <weights/error.h>
#include <weights/layout.h>
#include <weights/weights.h>

namespace
{

int fail(const char *what, const wt_errbuf &err)
{
	std::fprintf(stderr, "cxx_fetch: %s: %s (%s)\n", what, err.msg, wt_errname(err.code));
	return 1;
}

// An engine's sink: wt_sink first, so the callbacks get back to the object.
struct CountingSink {
	wt_sink base;
	const wt_manifest *m;
	std::vector<uint64_t> bytes; // per tensor, as written
	size_t next;                 // the tensor tensor_begin must see next
	int ends;

	static CountingSink *of(wt_sink *s)
	{
		return reinterpret_cast<CountingSink *>(s);
	}

	static int begin(wt_sink *s, const wt_manifest *m, wt_errbuf *)
	{
		CountingSink *k = of(s);
		k->m = m;
		k->bytes.assign(wt_manifest_n_tensors(m), 0);
		k->next = 0;
		return WT_OK;
	}
	static int tensor_begin(wt_sink *s, size_t t, wt_errbuf *err)
	{
		CountingSink *k = of(s);
		if (t != k->next)
			return wt_seterr(err, WT_EINVAL, "tensor %zu out of order (want %zu)", t,
			                 k->next);
		return WT_OK;
	}
	static int write(wt_sink *s, size_t t, uint64_t off, const void *, size_t len,
	                 wt_errbuf *err)
	{
		CountingSink *k = of(s);
		if (off != k->bytes[t])
			return wt_seterr(err, WT_EINVAL, "tensor %zu: write at %llu, want %llu", t,
			                 (unsigned long long)off, (unsigned long long)k->bytes[t]);
		k->bytes[t] += len;
		return WT_OK;
	}
	static int tensor_end(wt_sink *s, size_t t, wt_errbuf *)
	{
		of(s)->next = t + 1;
		return WT_OK;
	}
	static int end(wt_sink *s, wt_errbuf *)
	{
		of(s)->ends++;
		return WT_OK;
	}
	static void abort(wt_sink *)
	{
	}
};

int on_progress(void *ctx, uint64_t done, uint64_t total)
{
	*static_cast<uint64_t *>(ctx) = done;
	return done > total; // never cancels
}

} // namespace

int main(int argc, char **argv)
{
	if (argc != 6) {
		std::fprintf(stderr, "usage: cxx_fetch URL MODEL TP_SIZE TP_RANK OUT\n");
		return 2;
	}
	int ma = -1, mi = -1, pa = -1;
	const char *v = wt_version(&ma, &mi, &pa);
	if (std::string(v) != WT_VERSION_STRING || ma != WT_VERSION_MAJOR) {
		std::fprintf(stderr, "cxx_fetch: library %s, header %s\n", v, WT_VERSION_STRING);
		return 1;
	}
	wt_errbuf err;
	wt_client_opts o;
	wt_client_opts_init(&o);
	const char *eps[] = {argv[1]};
	o.endpoints = eps;
	o.n_endpoints = 1;
	o.client_id = "cxx_fetch";
	wt_client *c = NULL;
	if (wt_client_open(&c, &o, &err) != WT_OK)
		return fail("wt_client_open", err);
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = static_cast<uint32_t>(std::strtoul(argv[3], NULL, 10));
	l.tp_rank = static_cast<uint32_t>(std::strtoul(argv[4], NULL, 10));
	wt_manifest *m = NULL;
	if (wt_client_get_manifest(c, argv[2], &l, &m, &err) != WT_OK)
		return fail("wt_client_get_manifest", err);
	const size_t n = wt_manifest_n_tensors(m);

	// host sink: every tensor present with the manifest's size
	wt_host_sink *h = NULL;
	if (wt_host_sink_create(&h, &err) != WT_OK ||
	    wt_client_fetch(c, m, wt_host_sink_sink(h), NULL, &err) != WT_OK)
		return fail("fetch into the host sink", err);
	if (wt_host_sink_n_tensors(h) != n) {
		std::fprintf(stderr, "cxx_fetch: host sink holds %zu of %zu tensors\n",
		             wt_host_sink_n_tensors(h), n);
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		wt_tensor_info ti;
		const void *d = NULL;
		uint64_t nb = 0;
		if (wt_manifest_tensor(m, i, &ti) != WT_OK ||
		    wt_host_sink_find(h, ti.name, &d, &nb) != WT_OK || nb != ti.nbytes) {
			std::fprintf(stderr, "cxx_fetch: tensor %zu missing or wrong size\n", i);
			return 1;
		}
	}

	// the C++ engine sink, with fetch options and stats
	wt_sink_ops ops;
	wt_sink_ops_init(&ops);
	ops.begin = CountingSink::begin;
	ops.tensor_begin = CountingSink::tensor_begin;
	ops.write = CountingSink::write;
	ops.tensor_end = CountingSink::tensor_end;
	ops.end = CountingSink::end;
	ops.abort = CountingSink::abort;
	CountingSink k;
	k.base.ops = &ops;
	k.m = NULL;
	k.next = 0;
	k.ends = 0;
	wt_fetch_stats st;
	uint64_t progress = 0;
	wt_fetch_opts fo;
	wt_fetch_opts_init(&fo);
	fo.stats = &st;
	fo.progress = on_progress;
	fo.progress_ctx = &progress;
	if (wt_client_fetch(c, m, &k.base, &fo, &err) != WT_OK)
		return fail("fetch into the C++ sink", err);
	uint64_t sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += k.bytes[i];
	if (k.ends != 1 || k.next != n || sum != wt_manifest_total_bytes(m) || st.bytes != sum ||
	    progress != sum) {
		std::fprintf(stderr, "cxx_fetch: C++ sink got %llu bytes, %zu tensors, %d ends\n",
		             (unsigned long long)sum, k.next, k.ends);
		return 1;
	}

	// a safetensors file for the script to compare
	wt_file_sink *fs = NULL;
	if (wt_file_sink_create(&fs, argv[5], 0, &err) != WT_OK ||
	    wt_client_fetch(c, m, wt_file_sink_sink(fs), NULL, &err) != WT_OK)
		return fail("fetch into the file sink", err);
	std::printf("cxx_fetch: libweights %s, %s tp %s/%s: %zu tensors, %llu bytes, %llu chunks\n",
	            v, argv[2], argv[4], argv[3], n, (unsigned long long)sum,
	            (unsigned long long)st.chunks);
	wt_file_sink_destroy(fs);
	wt_host_sink_destroy(h);
	wt_manifest_free(m);
	wt_layout_clear(&l);
	wt_client_close(c);
	return 0;
}
