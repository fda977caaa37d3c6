/*
 * fuzz_safetensors.c — a whole safetensors file (8-byte length prefix, JSON
 * header, data) through st_check_prefix + st_parse_header, the parser every
 * checkpoint file and the client's file sink go through. An accepted file
 * must keep the parser's promises: tensors sorted by offset, tiling the data
 * section, inside the file, each findable by its name.
 */
#include <string.h>

#include "loader/loader.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	wt_errbuf err;
	uint64_t hdr_len;
	if (size < 8 || st_check_prefix(data, size, &hdr_len, &err) != WT_OK)
		return 0;
	FUZZ_CHECK(hdr_len <= size - 8);
	st_file f;
	if (fuzz_note("st_parse_header",
	              st_parse_header((const char *)data + 8, (size_t)hdr_len, size, &f, &err),
	              &err) != WT_OK) {
		FUZZ_CHECK(err.msg[0] != '\0');
		return 0;
	}
	FUZZ_CHECK(f.data_off == 8 + hdr_len && f.file_bytes == size);
	uint64_t at = f.data_off;
	for (size_t i = 0; i < f.n_tensors; i++) {
		const st_tensor *t = &f.tensors[i];
		FUZZ_CHECK(t->off == at && t->nbytes <= size - t->off);
		FUZZ_CHECK(t->ndim >= 0 && t->ndim <= WT_MAX_DIMS);
		at += t->nbytes;
		FUZZ_CHECK(st_find(&f, t->name) == t);
	}
	FUZZ_CHECK(at == size);
	for (size_t i = 0; i < f.n_meta; i++)
		FUZZ_CHECK(st_meta_get(&f, f.meta[i].key) != NULL);
	st_file_free(&f);
	return 0;
}
