// cxx_wrapper.cpp — include/weights/weights.hpp (C++17) against a real weightd:
// rank 1 of 2 into the wrapper's host and file sinks and into a C++
// weights::Sink subclass that forwards to a C file sink (both files are
// compared with `weightctl shard` by tests/integration/cxx_link.sh); errors
// as weights::Error with the library's code; an exception thrown in a Sink
// callback surfaces from fetch() (and Fetch::wait()) as itself, the fetch
// aborted once; moves; watch, delta and update (a refused update's report
// in weights::UpdateError); a broadcast root and replicas (the whole result
// when one fails); the Logger (kept across a move, its exceptions swallowed);
// weights::Admin (models, stats, warm, verify, evict, register, unregister;
// register with progress, of SLOW_BASE's m1, m2, m3); last, a new revision (one byte of
// MODEL_DIR changed) and an update that fails mid-way: UpdateError's report
// counts the bytes written in place.
//
//   cxx_wrapper URL MODEL OUT_DIR MODEL_DIR [SLOW_BASE]
// (MODEL_DIR: MODEL's folder, under the daemon's --register-roots, which
// re-checks it often: --revalidate-ms 200; SLOW_BASE: http://HOST:PORT/slow/
// serving copies of a model as m1, m2, m3, on a host in --register-hosts)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <weights/weights.hpp>

namespace
{

void expect(bool ok, const std::string &what)
{
	if (!ok) {
		std::fprintf(stderr, "cxx_wrapper: FAIL: %s\n", what.c_str());
		std::exit(1);
	}
}

// f() must throw weights::Error with code want; returns it.
template <class F> weights::Error expect_error(F &&f, int want, const std::string &what)
{
	try {
		f();
	} catch (const weights::Error &e) {
		expect(e.code() == want && std::string(e.name()) == wt_errname(want),
		       what + ": got " + e.what() + ", want " + wt_errname(want));
		return e;
	}
	expect(false, what + ": no weights::Error thrown");
	return weights::Error(WT_OK, "");
}

// Records every tensor's bytes and the callbacks, forwarding them to a C sink (optional).
struct RecordSink : weights::Sink {
	explicit RecordSink(wt_sink *inner = nullptr) : in(inner)
	{
	}
	wt_sink *in;
	std::vector<std::string> names;
	std::vector<std::vector<unsigned char>> bytes;
	int begins = 0, ends = 0, aborts = 0;

	void pass(int rv, const wt_errbuf &e)
	{
		if (rv != WT_OK)
			throw weights::Error(rv, e.msg);
	}
	void begin(weights::ManifestView m) override
	{
		begins++;
		names.clear();
		bytes.assign(m.n_tensors(), {});
		for (size_t i = 0; i < m.n_tensors(); i++)
			names.push_back(m.tensor(i).name);
		wt_errbuf e;
		if (in != nullptr)
			pass(in->ops->begin(in, m.get(), &e), e);
	}
	void tensor_begin(size_t t) override
	{
		wt_errbuf e;
		if (in != nullptr)
			pass(in->ops->tensor_begin(in, t, &e), e);
	}
	void write(size_t t, uint64_t off, const void *data, size_t len) override
	{
		std::vector<unsigned char> &b = bytes.at(t);
		if (off != b.size())
			throw weights::Error(WT_EINVAL, "write of tensor " + std::to_string(t) +
			                                    " at " + std::to_string(off));
		const unsigned char *p = static_cast<const unsigned char *>(data);
		b.insert(b.end(), p, p + len);
		wt_errbuf e;
		if (in != nullptr)
			pass(in->ops->write(in, t, off, data, len, &e), e);
	}
	void tensor_end(size_t t) override
	{
		wt_errbuf e;
		if (in != nullptr)
			pass(in->ops->tensor_end(in, t, &e), e);
	}
	void end() override
	{
		ends++;
		wt_errbuf e;
		if (in != nullptr)
			pass(in->ops->end(in, &e), e);
	}
	void abort() override
	{
		aborts++;
		if (in != nullptr)
			in->ops->abort(in);
	}
};

struct EngineFull : std::runtime_error {
	using std::runtime_error::runtime_error;
};

// Throws at one place: begin, the second write (EngineFull) or tensor_end (weights::Error).
struct ThrowingSink : RecordSink {
	enum Where { NONE, BEGIN, WRITE, TENSOR_END } where;
	int writes = 0;
	explicit ThrowingSink(Where w) : where(w)
	{
	}
	void begin(weights::ManifestView m) override
	{
		if (where == BEGIN)
			throw EngineFull("engine full at begin");
		RecordSink::begin(m);
	}
	void write(size_t t, uint64_t off, const void *data, size_t len) override
	{
		if (where == WRITE && ++writes == 2)
			throw EngineFull("engine memory full");
		RecordSink::write(t, off, data, len);
	}
	void tensor_end(size_t) override
	{
		if (where == TENSOR_END)
			throw weights::Error(WT_ENOSPC, "engine: no room after tensor");
	}
};

// The host sink holds exactly the bytes r recorded.
void same_bytes(const weights::HostSink &h, const RecordSink &r, const std::string &what)
{
	expect(!r.names.empty() && r.names.size() == r.bytes.size(), what + ": nothing recorded");
	for (size_t i = 0; i < r.names.size(); i++) {
		std::optional<weights::Bytes> b = h.find(r.names[i]);
		expect(
		    b && b->nbytes == r.bytes[i].size() &&
		        (b->nbytes == 0 || std::memcmp(b->data, r.bytes[i].data(), b->nbytes) == 0),
		    what + ": tensor '" + r.names[i] + "' differs from the host sink's");
	}
}

// f() must throw EngineFull (not turned into anything else).
template <class F> void expect_engine_full(F &&f, const std::string &what)
{
	try {
		f();
	} catch (const EngineFull &) {
		return;
	} catch (const std::exception &e) {
		expect(false, what + ": got '" + e.what() + "' instead of EngineFull");
	}
	expect(false, what + ": nothing thrown");
}

void sink_exceptions(const weights::Client &c, const weights::Manifest &m)
{
	ThrowingSink w(ThrowingSink::WRITE);
	expect_engine_full([&] { c.fetch(m, w); }, "throw in write");
	expect(w.aborts == 1 && w.ends == 0, "throw in write: abort once, no end");
	w.where = ThrowingSink::NONE; // the same sink again: the old exception is gone
	c.fetch(m, w);
	expect(w.aborts == 1 && w.ends == 1, "a fetch after the throwing one succeeds");

	ThrowingSink b(ThrowingSink::BEGIN);
	expect_engine_full([&] { c.fetch(m, b); }, "throw in begin");
	expect(b.aborts == 0 && b.ends == 0, "throw in begin: abort is not called (engine.h)");

	ThrowingSink te(ThrowingSink::TENSOR_END);
	expect_error([&] { c.fetch(m, te); }, WT_ENOSPC, "weights::Error in tensor_end");
	expect(te.aborts == 1 && te.ends == 0, "throw in tensor_end: abort once");

	// what the C library sees: the callback's error code and message
	ThrowingSink cw(ThrowingSink::WRITE), ct(ThrowingSink::TENSOR_END);
	wt_errbuf err;
	int rv = wt_client_fetch(c.get(), m.get(), weights::SinkRef(cw).c, nullptr, &err);
	expect(rv == WT_ECANCELED && std::string(err.msg) == "sink: engine memory full",
	       std::string("C view of EngineFull: ") + wt_errname(rv) + " " + err.msg);
	rv = wt_client_fetch(c.get(), m.get(), weights::SinkRef(ct).c, nullptr, &err);
	expect(rv == WT_ENOSPC && std::string(err.msg) == "engine: no room after tensor",
	       std::string("C view of weights::Error: ") + wt_errname(rv) + " " + err.msg);

	ThrowingSink aw(ThrowingSink::WRITE); // the same through an asynchronous fetch
	weights::Fetch f = c.fetch_start(m, aw);
	expect_engine_full([&] { f.wait(); }, "throw in write, fetch_start");
	expect(aw.aborts == 1 && aw.ends == 0, "async throw in write: abort once");
}

void updates(const weights::Client &c, const weights::Manifest &m, weights::HostSink &h,
             const std::string &model)
{
	weights::Watch w = c.watch(model, "", 0);
	expect(w.changed && w.revision == m.revision(), "watch: the manifest's revision");
	w = c.watch(model, w.revision, 0);
	expect(!w.changed && w.revision == m.revision(), "watch of the current revision");
	weights::Delta d = weights::delta(m, m);
	expect(d.n_changed == 0 && d.bytes == 0 && d.changed.size() == m.n_tensors(), "delta");
	wt_update_report r = c.fetch_update(m, m, h.update_sink());
	expect(r.tensors_total == m.n_tensors() && r.tensors_updated == 0, "fetch_update");
	std::vector<unsigned char> sel(m.n_tensors(), 0);
	sel.back() = 1;
	RecordSink one;
	c.fetch_tensors(m, sel, one);
	expect(one.names.size() == 1 && one.names[0] == m.tensor(m.n_tensors() - 1).name,
	       "fetch_tensors: the one selected tensor");
	same_bytes(h, one, "fetch_tensors");
	sel.pop_back();
	expect_error([&] { c.fetch_tensors(m, sel, one); }, WT_EINVAL, "select of the wrong size");

	// another rank cannot be updated in place: the report comes with the error
	weights::Manifest r0 = c.manifest(model, weights::Layout().tp(2, 0));
	try {
		c.fetch_update(r0, m, h.update_sink());
		expect(false, "fetch_update across ranks: nothing thrown");
	} catch (const weights::UpdateError &e) {
		const wt_update_report &rep = e.report();
		expect(e.code() == WT_ELAYOUT && rep.revision_after == m.revision() &&
		           rep.revision_before == r0.revision() && rep.tp_rank == 1 &&
		           rep.tensors_total == m.n_tensors() &&
		           rep.bytes_total == m.total_bytes() && rep.tensors_updated == 0 &&
		           rep.bytes_updated == 0,
		       std::string("UpdateError's report: ") + e.what());
	}
	// a weights::Sink's own exception is still itself (an update of no tensor calls begin)
	ThrowingSink tb(ThrowingSink::BEGIN);
	expect_engine_full([&] { c.fetch_update(m, m, tb); }, "throw in an update's begin");
}

void moves(weights::Client &c, weights::Manifest &m, weights::HostSink &h, const weights::Layout &l)
{
	weights::Client c2 = std::move(c);
	weights::Manifest m2 = std::move(m);
	expect(c.get() == nullptr && m.get() == nullptr, "moved-from handles are empty");
	weights::HostSink h2;
	h2 = std::move(h); // h2's own sink is destroyed here
	expect(h.get() == nullptr, "moved-from host sink is empty");
	c2.fetch(m2, h2);
	expect(h2.n_tensors() == m2.n_tensors(), "fetch with moved handles");
	weights::Manifest &same = m2;
	m2 = std::move(same); // self-move keeps it
	expect(m2.get() != nullptr, "self-move of a manifest");
	weights::Fetch f = c2.fetch_start(m2, h2);
	weights::Fetch g = std::move(f);
	while (!g.wait(20))
		;
	expect(f.get() == nullptr && h2.n_tensors() == m2.n_tensors(), "moved asynchronous fetch");
	c = std::move(c2); // back: the caller goes on with them
	m = std::move(m2);
	h = std::move(h2);
	weights::Layout l2 = l;
	l2.exclude("lm_head\\.weight");
	expect(l2.text() != l.text() && l2.text().find("lm_head") != std::string::npos,
	       "a copied layout is its own: " + l2.text());
	weights::Layout l3 = std::move(l2);
	expect(l2.text() == weights::Layout().text() &&
	           l3.text().find("lm_head") != std::string::npos,
	       "a moved-from layout is the default one");
}

void broadcast(const weights::Client &c, const weights::Manifest &m, const std::string &dir)
{
	wt_bcast_opts o = weights::bcast_options();
	std::string url = "ipc://" + dir + "/bcast.ipc";
	o.url = url.c_str();
	o.group = "cxx";
	o.n_members = 2;
	weights::HostSink root_h, rep_h;
	weights::BcastRoot root(o, root_h);
	std::exception_ptr rep_exc;
	std::thread rep([&] {
		try {
			weights::bcast_receive(o, m, rep_h);
		} catch (...) {
			rep_exc = std::current_exception();
		}
	});
	c.fetch(m, root);
	rep.join();
	if (rep_exc)
		std::rethrow_exception(rep_exc);
	weights::BcastResult b = root.outcome();
	expect(b.ok() && b.failures.empty() && b.replicas == 1 && b.done == 1 &&
	           root.result() == 1 && root_h.n_tensors() == m.n_tensors() &&
	           rep_h.n_tensors() == m.n_tensors(),
	       "broadcast: root and replica hold the rank");
}

// Two replicas, one whose sink throws at begin: the root's fetch succeeds and
// outcome() tells 1 of 2 done and the failure; result() throws it.
void broadcast_one_fails(const weights::Client &c, const weights::Manifest &m,
                         const std::string &dir)
{
	wt_bcast_opts o = weights::bcast_options();
	std::string url = "ipc://" + dir + "/bcast2.ipc";
	o.url = url.c_str();
	o.group = "cxx2";
	o.n_members = 3;
	weights::HostSink root_h, good_h;
	ThrowingSink bad(ThrowingSink::BEGIN);
	weights::BcastRoot root(o, root_h);
	std::exception_ptr good_exc;
	bool bad_threw = false;
	std::thread good([&] {
		try {
			weights::bcast_receive(o, m, good_h);
		} catch (...) {
			good_exc = std::current_exception();
		}
	});
	std::thread fail([&] {
		try {
			weights::bcast_receive(o, m, bad);
		} catch (const EngineFull &) {
			bad_threw = true;
		} catch (...) {
		}
	});
	c.fetch(m, root);
	good.join();
	fail.join();
	if (good_exc)
		std::rethrow_exception(good_exc);
	weights::BcastResult b = root.outcome();
	expect(bad_threw && good_h.n_tensors() == m.n_tensors(), "broadcast: the good replica");
	expect(b.replicas == 2 && b.done == 1 && !b.ok() &&
	           b.error->message().find("replica") != std::string::npos,
	       "outcome of 1 of 2: done " + std::to_string(b.done) + " of " +
	           std::to_string(b.replicas) + ": " + (b.error ? b.error->what() : "no error"));
	expect_error([&] { root.result(); }, b.error->code(), "result() throws the failure");
	expect(b.failures.size() == 1 && b.failures[0].code() == b.error->code() &&
	           b.failures[0].message().find("replica") != std::string::npos,
	       "failures: one, the replica's own (" + std::to_string(b.failures.size()) + ")");
}

// What a Logger got, from any thread.
struct Logged {
	std::mutex mu;
	std::vector<std::string> msgs;
	size_t count(const std::string &part)
	{
		std::lock_guard<std::mutex> g(mu);
		size_t n = 0;
		for (const std::string &s : msgs)
			n += s.find(part) != std::string::npos;
		return n;
	}
};

// Endpoints {a dead one, url}: each admin call (list order) logs that it
// tries the next endpoint.
void logger(const std::string &url, const std::string &dir)
{
	std::vector<std::string> eps{"ipc://" + dir + "/nobody.ipc", url};
	Logged got;
	weights::Client c(eps, weights::Client::options(), [&got](int level, std::string_view msg) {
		std::lock_guard<std::mutex> g(got.mu);
		got.msgs.push_back(std::to_string(level) + " " + std::string(msg));
	});
	const std::string next = std::to_string(WT_CLIENT_LOG_WARNING) + " ";
	weights::Admin(c).stats();
	size_t before = got.count("trying the next endpoint");
	expect(before >= 1 && got.count(next) >= 1, "the logger got the fail-over warning");
	weights::Client moved = std::move(c);
	weights::Admin(moved).stats();
	expect(got.count("trying the next endpoint") > before,
	       "a moved client still logs to its logger");
	expect(moved.log_errors() == 0, "no logger error counted");

	weights::Client t(eps, weights::Client::options(),
	                  [](int, std::string_view) { throw std::runtime_error("logger broke"); });
	weights::Admin(t).stats(); // the logger's exception does not cross the C library
	expect(t.log_errors() >= 1, "the logger's exceptions are counted");
}

// weights::Admin against the daemon (its --register-roots hold model_dir).
void admin(const weights::Client &c, const std::string &model, const weights::Layout &l,
           const std::string &model_dir)
{
	weights::Admin a(c);
	std::vector<weights::ModelInfo> ms = a.models();
	expect(ms.size() == 1 && ms[0].name == model && ms[0].available && ms[0].n_tensors > 0 &&
	           ms[0].source == "folder",
	       "models(): the one model");
	weights::AdminResult w = a.warm(model, l);
	weights::AdminResult v = a.verify();
	expect(v.chunks > 0 && v.bad == 0 && !v.text.empty(), "verify: " + v.text);
	weights::AdminResult st = a.stats();
	expect(st.shards >= 1 && st.bytes > 0 && st.disk_bytes > 0, "stats: " + st.text);
	weights::AdminResult ev = a.evict(model);
	expect(ev.shards == st.shards && ev.bad == 0,
	       "evict: " + ev.text + " (warm: " + w.text + ")");
	expect(a.stats().shards == 0, "stats after evict");
	expect(a.reclaim().disk_bytes <= st.disk_bytes, "reclaim");
	expect_error([&] { a.run(WT_ADMIN_REGISTER); }, WT_EINVAL, "register through run()");

	weights::AdminResult r = a.register_model("cxxreg", "file://" + model_dir);
	expect(r.bytes > 0, "register: " + r.text);
	ms = a.models();
	expect(ms.size() == 2 && ms[0].name == "cxxreg" && ms[0].source == "registered",
	       "models() after register");
	a.unregister("cxxreg");
	expect(a.models().size() == 1, "models() after unregister");
	// under a configuration override: the folder served as another class
	a.register_model_override("cxxmis", "file://" + model_dir,
	                          "{\"architectures\": [\"MistralForCausalLM\"]}");
	ms = a.models();
	expect(ms.size() == 2 && ms[0].name == "cxxmis" &&
	           ms[0].architecture == "MistralForCausalLM" &&
	           ms[0].config_override == "{\"architectures\":[\"MistralForCausalLM\"]}" &&
	           ms[1].config_override.empty(),
	       "models() after register_model_override, the override listed");
	a.unregister("cxxmis");
	expect_error([&] { a.register_model_override("cxxbad", "file://" + model_dir, "[1]"); },
	             WT_EINVAL, "a configuration override that is not an object");
	expect_error([&] { a.unregister("cxxreg"); }, WT_ENOTFOUND, "unregister twice");
}

// register_model with progress, of http:// copies of the model (slow_base +
// "m1", "m2", "m3": distinct objects, none known to the server) whose tensor
// reads take over a second each (objstore_server.py /slow/), so the server's
// open reports progress. Called, it lets the registration end; an exception
// it throws comes back as itself; false stops the wait.
void register_progress(const weights::Client &c, const std::string &slow_base)
{
	weights::Admin a(c);
	int calls = 0;
	uint64_t last_total = 0;
	weights::AdminResult r =
	    a.register_model("cxxslow", slow_base + "m1", [&](uint64_t read, uint64_t total) {
		    calls++;
		    expect(total == 0 || read <= total, "progress: read within total");
		    last_total = total;
		    return true;
	    });
	expect(r.bytes > 0 && calls >= 1,
	       "register with progress: " + std::to_string(calls) + " calls, " + r.text);
	std::printf("register_model with progress: %d calls, total %llu, %s\n", calls,
	            static_cast<unsigned long long>(last_total), r.text.c_str());
	a.unregister("cxxslow");
	bool threw = false;
	try {
		a.register_model("cxxslow2", slow_base + "m2", [](uint64_t, uint64_t) -> bool {
			throw std::out_of_range("stop here");
		});
	} catch (const std::out_of_range &x) {
		threw = std::string(x.what()) == "stop here";
	}
	expect(threw, "an exception thrown in progress is rethrown as itself");
	expect_error(
	    [&] {
		    a.register_model("cxxslow3", slow_base + "m3",
		                     [](uint64_t, uint64_t) { return false; });
	    },
	    WT_ECANCELED, "progress returning false stops the wait");
	for (const char *name : {"cxxslow2", "cxxslow3"}) // going on in the server: drop them
		try {
			a.unregister(name);
		} catch (const weights::Error &) {
		}
}

// A C sink over an update sink whose first tensor_end fails (WT_EIO): a
// failure of the library's call, not a C++ exception.
struct FailAtTensorEnd {
	wt_sink base; // first: the callbacks get the struct back
	wt_sink *in;
	wt_sink_ops ops;
	static wt_sink *inner(wt_sink *s)
	{
		return reinterpret_cast<FailAtTensorEnd *>(s)->in;
	}
	explicit FailAtTensorEnd(wt_sink *update) : in(update)
	{
		wt_sink_ops_init(&ops);
		ops.begin = [](wt_sink *s, const wt_manifest *m, wt_errbuf *e) {
			return inner(s)->ops->begin(inner(s), m, e);
		};
		ops.tensor_begin = [](wt_sink *s, size_t t, wt_errbuf *e) {
			return inner(s)->ops->tensor_begin(inner(s), t, e);
		};
		ops.write = [](wt_sink *s, size_t t, uint64_t off, const void *d, size_t n,
		               wt_errbuf *e) {
			return inner(s)->ops->write(inner(s), t, off, d, n, e);
		};
		ops.tensor_end = [](wt_sink *, size_t t, wt_errbuf *e) {
			return wt_seterr(e, WT_EIO, "test: tensor %zu: disk gone", t);
		};
		ops.end = [](wt_sink *s, wt_errbuf *e) { return inner(s)->ops->end(inner(s), e); };
		ops.abort = [](wt_sink *s) { inner(s)->ops->abort(inner(s)); };
		base.ops = &ops;
	}
};

// XOR the last byte of MODEL_DIR's last safetensors file (the end of a tensor
// that rank 1 holds), written aside and renamed, as a new revision would be.
void change_checkpoint(const std::string &model_dir)
{
	std::filesystem::path last;
	for (const auto &f : std::filesystem::directory_iterator(model_dir))
		if (f.path().extension() == ".safetensors" && f.path() > last)
			last = f.path();
	expect(!last.empty(), "no .safetensors file in " + model_dir);
	std::string b;
	{
		std::ifstream in(last, std::ios::binary);
		b.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
	}
	expect(!b.empty(), "reading " + last.string());
	b.back() = static_cast<char>(b.back() ^ 1);
	std::filesystem::path tmp = last.string() + ".new";
	{
		std::ofstream out(tmp, std::ios::binary);
		out.write(b.data(), static_cast<std::streamsize>(b.size()));
		expect(out.good(), "writing " + tmp.string());
	}
	std::filesystem::rename(tmp, last);
}

// An update that fails at its first changed tensor's end: UpdateError says
// what the C call reported, the bytes of that tensor written in place.
void update_fails(const weights::Client &c, const std::string &model, const weights::Layout &l,
                  const std::string &model_dir)
{
	weights::Manifest old = c.manifest(model, l);
	weights::HostSink h;
	c.fetch(old, h);
	change_checkpoint(model_dir);
	weights::Watch w = c.watch(model, old.revision(), 20000);
	expect(w.changed, "watch: no new revision after the checkpoint changed");
	weights::Manifest now = c.manifest(model, l);
	weights::Delta d = weights::delta(old, now);
	expect(d.n_changed >= 1 && d.bytes > 0, "delta of the new revision: nothing changed");
	size_t first = 0;
	while (!d.changed[first])
		first++;
	FailAtTensorEnd f(h.update_sink());
	try {
		c.fetch_update(old, now, &f.base);
		expect(false, "the failing update: nothing thrown");
	} catch (const weights::UpdateError &e) {
		const wt_update_report &rep = e.report();
		expect(e.code() == WT_EIO && rep.revision_after == now.revision() &&
		           rep.revision_before == old.revision() && rep.tensors_updated == 0 &&
		           rep.bytes_updated == now.tensor(first).nbytes,
		       "UpdateError after writing in place: " + std::to_string(rep.bytes_updated) +
		           " bytes reported, tensor " + now.tensor(first).name + " has " +
		           std::to_string(now.tensor(first).nbytes) + ": " + e.what());
	}
}

// With a CUDA device the rank goes there; without one the error is WT_EDEVICE.
void cuda(const weights::Client &c, const weights::Manifest &m)
{
	try {
		weights::CudaSink d(0);
		c.fetch(m, d);
		expect(d.n_tensors() == m.n_tensors() && d.find(m.tensor(0).name), "CUDA sink");
		std::printf("cxx_wrapper: CUDA sink holds the rank\n");
	} catch (const weights::Error &e) {
		expect(e.code() == WT_EDEVICE, std::string("CUDA sink: ") + e.what());
		std::printf("cxx_wrapper: no CUDA device: %s\n", e.what());
	}
}

} // namespace

int main(int argc, char **argv)
{
	if (argc != 5 && argc != 6) {
		std::fprintf(stderr,
		             "usage: cxx_wrapper URL MODEL OUT_DIR MODEL_DIR [SLOW_BASE]\n");
		return 2;
	}
	const std::string model = argv[2], dir = argv[3];
	try {
		weights::Client c({argv[1]});
		weights::Layout l = weights::Layout().tp(2, 1);
		weights::Manifest m = c.manifest(model, l);
		expect(m.layout_text() == l.text() && m.tp_rank() == 1 && m.n_tensors() > 1,
		       "manifest of rank 1: " + m.layout_text());

		weights::HostSink h;
		wt_fetch_stats st;
		wt_fetch_opts fo;
		wt_fetch_opts_init(&fo);
		fo.stats = &st;
		c.fetch(m, h, &fo);
		expect(h.n_tensors() == m.n_tensors() && st.bytes == m.total_bytes(), "host sink");
		weights::FileSink f(dir + "/file.safetensors");
		c.fetch(m, f);
		weights::FileSink inner(dir + "/fwd.safetensors");
		RecordSink r(inner.sink());
		c.fetch(m, r);
		expect(r.begins == 1 && r.ends == 1 && r.aborts == 0, "C++ sink: begin, end once");
		same_bytes(h, r, "C++ sink");

		weights::Error e =
		    expect_error([&] { c.manifest("nosuch", l); }, WT_ENOTFOUND, "unknown model");
		expect(e.message().find("nosuch") != std::string::npos, "message names the model");
		expect_error([] { weights::Client none{std::vector<std::string>{}}; }, WT_EINVAL,
		             "client without endpoints");
		expect_error([&] { weights::Layout().quant("fp3"); }, WT_EINVAL, "unknown quant");

		sink_exceptions(c, m);
		updates(c, m, h, model);
		moves(c, m, h, l);
		c.fetch(m, h);
		broadcast(c, m, dir);
		broadcast_one_fails(c, m, dir);
		logger(argv[1], dir);
		admin(c, model, l, argv[4]);
		if (argc == 6)
			register_progress(c, argv[5]);
		cuda(c, m);
		update_fails(c, model, l, argv[4]); // last: it changes the checkpoint
		std::printf("cxx_wrapper: %zu tensors, %llu bytes; %s\n", m.n_tensors(),
		            static_cast<unsigned long long>(m.total_bytes()), e.what());
	} catch (const std::exception &x) {
		std::fprintf(stderr, "cxx_wrapper: FAIL: %s\n", x.what());
		return 1;
	}
	return 0;
}
