/* test_config_override.c — a checkpoint opened under a configuration override (vLLM's
 * hf_overrides; ckpt_open_opts.config_override): the override merged over config.json before
 * anything reads it (objects recursively), its canonical text part of the revision, the
 * refusals of an override that is not one non-empty JSON object, and
 * ckpt_override_for_arch. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/common.h"
#include "loader/loader.h"
#include "tests/util/testutil.h"

#define SEED 1717u

static char *g_dir;

static int setup(void **state)
{
	(void)state;
	g_dir = tu_mkdtemp("cfgov");
	if (g_dir == NULL ||
	    tu_write_ckpt(g_dir, tu_llama_config, tu_tiny_llama, TU_TINY_LLAMA_N, 2, SEED) != 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tu_rmrf(g_dir);
	free(g_dir);
	return 0;
}

/* Open g_dir under override (quick: no digest); the loader's code, *c NULL on failure. */
static int open_with(const char *override, bool quick, store **s, ckpt **c, wt_errbuf *err)
{
	*c = NULL;
	int rv = store_open(s, g_dir, err);
	ckpt_open_opts o = {.config_override = override, .quick = quick};
	if (rv == WT_OK)
		rv = ckpt_open_with(c, *s, &o, err);
	return rv;
}

static void close_both(store *s, ckpt *c)
{
	ckpt_close(c);
	store_close(s);
}

/* The revision of g_dir under override (a fresh open each time). */
static void revision_of(const char *override, char out[65])
{
	store *s = NULL;
	ckpt *c = NULL;
	wt_errbuf err = {0};
	int rv = open_with(override, false, &s, &c, &err);
	if (rv != WT_OK)
		fail_msg("open under %s: %s", override ? override : "(none)", err.msg);
	snprintf(out, 65, "%s", ckpt_revision(c));
	close_both(s, c);
}

/* The override is what the config reader sees: architectures replaced, a new key read,
 * the other keys as config.json has them; the raw text the families read merged too. */
static void test_merged(void **state)
{
	(void)state;
	store *s = NULL;
	ckpt *c = NULL;
	wt_errbuf err = {0};
	const char *ov =
	    "{ \"num_hidden_layers\": 1,\n \"architectures\": [\"MistralForCausalLM\"] }";
	assert_int_equal(open_with(ov, false, &s, &c, &err), WT_OK);
	const ckpt_config *cfg = ckpt_get_config(c);
	assert_string_equal(cfg->architecture, "MistralForCausalLM");
	assert_int_equal(cfg->num_hidden_layers, 1);
	assert_int_equal(cfg->hidden_size, 64); /* not overridden */
	assert_int_equal(cfg->vocab_size, 128);
	assert_string_equal(ckpt_config_override(c),
	                    "{\"architectures\":[\"MistralForCausalLM\"],\"num_hidden_layers\":1}");
	size_t len = 0;
	const char *text = ckpt_config_json(c, &len);
	assert_int_equal(strlen(text), len);
	assert_non_null(strstr(text, "\"architectures\":[\"MistralForCausalLM\"]"));
	assert_null(strstr(text, "LlamaForCausalLM"));
	close_both(s, c);
	/* without one: config.json as stored, no override */
	assert_int_equal(open_with(NULL, true, &s, &c, &err), WT_OK);
	assert_string_equal(ckpt_get_config(c)->architecture, "LlamaForCausalLM");
	assert_int_equal(ckpt_get_config(c)->num_hidden_layers, 2);
	assert_string_equal(ckpt_config_override(c), "");
	close_both(s, c);
	/* "" is none too */
	assert_int_equal(open_with("", true, &s, &c, &err), WT_OK);
	assert_string_equal(ckpt_config_override(c), "");
	close_both(s, c);
}

/* Objects merge into objects (a sub-config keeps the keys the override leaves out); any
 * other value replaces the key's, an object over a non-object included. */
static void test_nested(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp("cfgovn");
	const char *cfg_text =
	    "{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": \"llama\", "
	    "\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "
	    "\"intermediate_size\": 128, \"num_hidden_layers\": 2, \"vocab_size\": 128, "
	    "\"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8.0, "
	    "\"low_freq_factor\": 1.0, \"high_freq_factor\": 4.0, "
	    "\"original_max_position_embeddings\": 8192}, \"extra\": 5}";
	assert_int_equal(tu_write_ckpt(dir, cfg_text, tu_tiny_llama, TU_TINY_LLAMA_N, 1, SEED), 0);
	store *s = NULL;
	ckpt *c = NULL;
	wt_errbuf err = {0};
	assert_int_equal(store_open(&s, dir, &err), WT_OK);
	ckpt_open_opts o = {.quick = true,
	                    .config_override = "{\"rope_scaling\": {\"factor\": 16.0}, "
	                                       "\"extra\": {\"now\": \"an object\"}}"};
	assert_int_equal(ckpt_open_with(&c, s, &o, &err), WT_OK);
	size_t len = 0;
	const char *text = ckpt_config_json(c, &len);
	assert_non_null(strstr(text, "\"factor\":16.0"));
	assert_non_null(strstr(text, "\"rope_type\":\"llama3\""));
	assert_non_null(strstr(text, "\"original_max_position_embeddings\":8192"));
	assert_non_null(strstr(text, "\"extra\":{\"now\":\"an object\"}"));
	close_both(s, c);
	tu_rmrf(dir);
	free(dir);
}

/* The revision names the override: none, one and another all differ; the same object in
 * another key order or spacing is the same revision (canonical text); the files' part is
 * unchanged (a second open without one gives the first revision again). */
static void test_revision(void **state)
{
	(void)state;
	char none[65], a[65], a2[65], b[65], none2[65];
	revision_of(NULL, none);
	revision_of("{\"architectures\":[\"MistralForCausalLM\"],\"num_hidden_layers\":2}", a);
	revision_of(
	    "{ \"num_hidden_layers\" : 2 , \"architectures\" : [ \"MistralForCausalLM\" ] }", a2);
	revision_of("{\"architectures\":[\"MistralForCausalLM\"]}", b);
	revision_of(NULL, none2);
	assert_int_equal(strlen(none), 64);
	assert_string_equal(none, none2);
	assert_string_not_equal(none, a);
	assert_string_not_equal(none, b);
	assert_string_not_equal(a, b);
	assert_string_equal(a, a2);
	/* an override that changes nothing still names itself */
	char same[65];
	revision_of("{\"architectures\":[\"LlamaForCausalLM\"]}", same);
	assert_string_not_equal(none, same);
}

static void expect_refused(const char *override, int code, const char *needle)
{
	store *s = NULL;
	ckpt *c = NULL;
	wt_errbuf err = {0};
	int rv = open_with(override, false, &s, &c, &err);
	if (rv != code || strstr(err.msg, needle) == NULL)
		fail_msg("override %.60s: %s (%s), want %s with '%s'", override, wt_errname(rv),
		         err.msg, wt_errname(code), needle);
	assert_null(c);
	store_close(s);
}

static void test_refused(void **state)
{
	(void)state;
	expect_refused("{\"architectures\": [", WT_EINVAL, "not valid JSON");
	expect_refused("[{\"architectures\": [\"X\"]}]", WT_EINVAL, "not an array");
	expect_refused("\"MistralForCausalLM\"", WT_EINVAL, "not a single value");
	expect_refused("{}", WT_EINVAL, "the object is empty");
	expect_refused("{\"a\": 1, \"a\": 2}", WT_EINVAL, "not valid JSON");
	/* past 64 KiB */
	size_t big = 65u * 1024u;
	char *t = malloc(big + 1);
	assert_non_null(t);
	memset(t, ' ', big);
	memcpy(t, "{\"x\": 1}", 8);
	t[big] = '\0';
	expect_refused(t, WT_ETOOBIG, "more than the 65536 allowed");
	free(t);
	/* under 64 KiB as text, over it canonically (each 3-byte character is 6 bytes as \u) */
	size_t nch = 12000;
	t = malloc(16 + 3 * nch);
	assert_non_null(t);
	size_t k = 7;
	memcpy(t, "{\"x\": \"", 7);
	for (size_t i = 0; i < nch; i++, k += 3)
		memcpy(t + k, "\xe2\x82\xac", 3); /* the euro sign */
	memcpy(t + k, "\"}", 3);
	assert_true(strlen(t) < 65536);
	expect_refused(t, WT_ETOOBIG, "in canonical form");
	free(t);
	/* the merged config is read as any config.json: a bad value names its key, and says
	 * the override was in play */
	expect_refused("{\"num_hidden_layers\": \"two\"}", WT_ECORRUPT, "num_hidden_layers");
	expect_refused("{\"num_hidden_layers\": \"two\"}", WT_ECORRUPT, "with the config override");
	expect_refused("{\"architectures\": []}", WT_ECORRUPT, "architectures");
}

/* A config.json without architectures is made usable by the override that names one. */
static void test_supplies_missing(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp("cfgovm");
	const char *no_arch = "{\"model_type\": \"llama\", \"hidden_size\": 64, "
	                      "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, "
	                      "\"intermediate_size\": 128, \"num_hidden_layers\": 2, "
	                      "\"vocab_size\": 128}";
	assert_int_equal(tu_write_ckpt(dir, no_arch, tu_tiny_llama, TU_TINY_LLAMA_N, 1, SEED), 0);
	store *s = NULL;
	ckpt *c = NULL;
	wt_errbuf err = {0};
	assert_int_equal(store_open(&s, dir, &err), WT_OK);
	assert_int_equal(ckpt_open(&c, s, &err), WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "architectures"));
	char *ov = NULL;
	assert_int_equal(ckpt_override_for_arch("LlamaForCausalLM", &ov, &err), WT_OK);
	ckpt_open_opts o = {.config_override = ov, .quick = true};
	assert_int_equal(ckpt_open_with(&c, s, &o, &err), WT_OK);
	assert_string_equal(ckpt_get_config(c)->architecture, "LlamaForCausalLM");
	free(ov);
	close_both(s, c);
	tu_rmrf(dir);
	free(dir);
}

static void test_for_arch(void **state)
{
	(void)state;
	char *ov = NULL;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_override_for_arch("DeepSeekMTPModel", &ov, &err), WT_OK);
	assert_string_equal(ov, "{\"architectures\":[\"DeepSeekMTPModel\"]}");
	free(ov);
	/* JSON metacharacters are escaped, not spliced */
	assert_int_equal(ckpt_override_for_arch("A\"], \"x\": [\"", &ov, &err), WT_OK);
	assert_string_equal(ov, "{\"architectures\":[\"A\\\"], \\\"x\\\": [\\\"\"]}");
	free(ov);
	assert_int_equal(ckpt_override_for_arch("", &ov, &err), WT_EINVAL);
	assert_null(ov);
	assert_int_equal(ckpt_override_for_arch("A\nB", &ov, &err), WT_EINVAL);
	assert_non_null(strstr(err.msg, "control character"));
	assert_int_equal(ckpt_override_for_arch("A\xff", &ov, &err), WT_EINVAL);
	assert_non_null(strstr(err.msg, "UTF-8"));
	assert_null(ov);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_merged),           cmocka_unit_test(test_nested),
	    cmocka_unit_test(test_revision),         cmocka_unit_test(test_refused),
	    cmocka_unit_test(test_supplies_missing), cmocka_unit_test(test_for_arch),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
