/*
 * fuzz_layout.c — the layout flags (wt_layout_parse_arg), exclude patterns
 * (wt_layout_add_exclude, common_excl_regex's limits, then regcomp/regexec
 * through shardmap_excl_compile) and the canonical layout text.
 *
 * Input: lines, one argv word each ("--tp-size", "4", "--exclude=lm_head",
 * ...). A word that is not a layout flag is added as an exclude pattern, or,
 * after a line "--raw", as an include name. A layout wt_layout_check accepts
 * must: format to a text that fits, format alike after a copy and after the
 * protobuf round trip the daemon's decoder makes, and have exclude patterns
 * that compile and match in bounded time (the limits' promise).
 */
#include <string.h>

#include "common/common.h"
#include "proto/wire.h"
#include "shardmap/shardmap_int.h"
#include "tests/fuzz/fuzz.h"
#include "weights/weights.h"

#define MAX_WORDS 256

static void check_accepted(const wt_layout *l)
{
	static char a[1 << 17], b[1 << 17];
	size_t n = wt_layout_format(l, a, sizeof(a));
	FUZZ_CHECK(n < sizeof(a));
	wt_layout c;
	wt_layout_init(&c);
	FUZZ_CHECK(wt_layout_copy(&c, l) == WT_OK);
	FUZZ_CHECK(wt_layout_format(&c, b, sizeof(b)) == n && strcmp(a, b) == 0);

	/* the wire round trip (client encode, daemon decode) */
	char *excl[WT_MAX_EXCLUDE];
	Weights__Layout pb = WEIGHTS__LAYOUT__INIT;
	wire_layout_to_pb(l, &pb, excl);
	wt_layout d;
	wt_layout_init(&d);
	wt_errbuf err;
	int rv = wire_layout_from_pb(&pb, &d, &err);
	if (rv != WT_OK)
		fprintf(stderr, "fuzz_layout: wire round trip refused '%s': %s\n", a, err.msg);
	FUZZ_CHECK(rv == WT_OK);
	FUZZ_CHECK(wt_layout_format(&d, b, sizeof(b)) == n && strcmp(a, b) == 0);

	sm_excl *x = NULL;
	rv = shardmap_excl_compile((const char *const *)l->exclude, l->n_exclude, &x, &err);
	if (fuzz_note("shardmap_excl_compile", rv, &err) == WT_OK) {
		static const char *const names[] = {
		    "lm_head",
		    "model.embed_tokens",
		    "model.layers.0.mlp.gate_proj",
		    "model.layers.17.self_attn.q_proj",
		    "visual.blocks.3.attn.qkv",
		    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"};
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			(void)shardmap_excl_match(x, names[i]);
		shardmap_excl_free(x);
	}
	wt_layout_clear(&c);
	wt_layout_clear(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	char *argv[MAX_WORDS];
	int argc = 0;
	for (char *s = text; argc < MAX_WORDS;) {
		argv[argc++] = s;
		char *nl = memchr(s, '\n', (size_t)(text + size - s));
		if (nl == NULL)
			break;
		*nl = '\0';
		s = nl + 1;
	}
	wt_layout l;
	wt_layout_init(&l);
	wt_errbuf err;
	int raw = 0;
	for (int i = 0; i < argc;) {
		if (strcmp(argv[i], "--raw") == 0) {
			raw = l.raw = 1;
			i++;
			continue;
		}
		int at = i;
		int r = wt_layout_parse_arg(&l, argc, argv, &i, &err);
		if (r == 1) {
			FUZZ_CHECK(i > at && i <= argc);
			continue;
		}
		if (r == -1)
			FUZZ_CHECK(err.msg[0] != '\0');
		else if (raw)
			(void)wt_layout_add_include(&l, argv[i], &err);
		else if (wt_layout_add_exclude(&l, argv[i], &err) == WT_OK)
			(void)common_excl_regex(argv[i], NULL, NULL, &err);
		i = at + 1;
	}
	if (fuzz_note("wt_layout_check", wt_layout_check(&l, &err), &err) == WT_OK)
		check_accepted(&l);
	else
		FUZZ_CHECK(err.msg[0] != '\0');
	wt_layout_clear(&l);
	free(text);
	return 0;
}
