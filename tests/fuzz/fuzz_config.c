/*
 * fuzz_config.c — the daemon's config file (wd_config_load_file: libinih with
 * the line-counting reader, the table's parsers and range checks), then, for
 * an accepted file, wd_config_check and a round trip.
 *
 * Input: the bytes of weightd.conf, written to a file in a temp folder.
 * A refused file must say file:line (or file: for the whole file). An
 * accepted one must hold every numeric value inside its table range and a
 * known log level; written back out as "key=value" lines (a list key once per
 * value, an emptied list as "key="), it must load again to the same values
 * (wd_config_reload reports no difference).
 */
#include <ini.h>
#include <string.h>

#include "common/common.h"
#include "tests/fuzz/fuzz.h"
#include "tests/util/testutil.h"
#include "weightd/weightd.h"

static char *dir, *conf, *back;

static void cleanup(void)
{
	if (dir != NULL)
		tu_rmrf(dir);
	free(dir);
	free(conf);
	free(back);
}

static void setup(void)
{
	if ((dir = tu_mkdtemp("fuzz-config")) == NULL ||
	    (conf = tu_path(dir, "weightd.conf")) == NULL ||
	    (back = tu_path(dir, "back.conf")) == NULL) {
		fprintf(stderr, "fuzz_config: cannot set up a temp folder\n");
		abort();
	}
	common_log_set(NULL, NULL, 0); /* the token-mode warning is not a finding */
	atexit(cleanup);
}

static void count_diff(void *ctx, const wd_cfg_key *k, bool applied)
{
	(void)applied;
	fprintf(stderr, "fuzz_config: round trip changed %s\n", k->name);
	(*(size_t *)ctx)++;
}

/* One "name=value\n" line; false when it would not fit a line of the file. */
static bool put_line(FILE *f, const char *name, const char *value)
{
	if (strlen(name) + strlen(value) + 2 > (size_t)ini_max_line - 2)
		return false;
	fprintf(f, "%s=%s\n", name, value);
	return true;
}

static const char *level_name(uint64_t lv)
{
	static const char *const names[] = {"err", "warning", "notice", "info", "debug"};
	FUZZ_CHECK(lv >= WT_LOG_ERR && lv <= WT_LOG_DEBUG);
	return names[lv - WT_LOG_ERR];
}

/* Values in range; then the file written back loads to the same values. */
static void check_accepted(const wd_config *c)
{
	size_t n_keys;
	const wd_cfg_key *t = wd_config_table(&n_keys);
	FILE *f = fopen(back, "w");
	FUZZ_CHECK(f != NULL);
	bool fits = true;
	for (size_t i = 0; i < n_keys; i++) {
		const wd_cfg_key *k = &t[i];
		const void *field = (const char *)c + k->off;
		char num[64];
		switch (k->type) {
		case WD_CFG_STRING:
			fits &= put_line(f, k->name, *(char *const *)field);
			break;
		case WD_CFG_LIST: {
			const wd_strlist *l = field;
			if (l->n == 0)
				fits &= put_line(f, k->name, "");
			for (size_t j = 0; j < l->n; j++) {
				FUZZ_CHECK(l->v[j][0] != '\0');
				fits &= put_line(f, k->name, l->v[j]);
			}
			break;
		}
		case WD_CFG_LEVEL:
			fits &= put_line(f, k->name, level_name(*(const uint64_t *)field));
			break;
		case WD_CFG_RATIO: {
			uint64_t v = *(const uint64_t *)field;
			FUZZ_CHECK(v >= k->min && v <= k->max && (v == 0 || v > 100));
			snprintf(num, sizeof(num), "%llu.%02llu", (unsigned long long)v / 100,
			         (unsigned long long)v % 100);
			fits &= put_line(f, k->name, num);
			break;
		}
		default: {
			uint64_t v = *(const uint64_t *)field;
			if (v < k->min || v > k->max)
				fprintf(stderr,
				        "fuzz_config: accepted %s = %llu out of %llu..%llu\n",
				        k->name, (unsigned long long)v, (unsigned long long)k->min,
				        (unsigned long long)k->max);
			FUZZ_CHECK(v >= k->min && v <= k->max);
			snprintf(num, sizeof(num), "%llu", (unsigned long long)v);
			fits &= put_line(f, k->name, num);
			break;
		}
		}
	}
	FUZZ_CHECK(fclose(f) == 0);
	wt_errbuf err;
	FUZZ_CHECK(wd_config_check_server_id(c->server_id, "server_id", &err) == WT_OK);
	if (!fits)
		return;
	wd_config d;
	FUZZ_CHECK(wd_config_init(&d) == WT_OK);
	int rv = wd_config_load_file(&d, back, &err);
	if (rv != WT_OK)
		fprintf(stderr, "fuzz_config: round trip refused: %s\n", err.msg);
	FUZZ_CHECK(rv == WT_OK);
	size_t n_diff = 0;
	wd_config_reload(&d, c, count_diff, &n_diff);
	FUZZ_CHECK(n_diff == 0);
	wd_config_free(&d);
}

/* wd_config_check resolves metrics_listen's host: only a numeric one, so a
 * name does not wait on DNS (the URL parser is in the check either way). */
static bool numeric_metrics(const char *url)
{
	if (strncmp(url, "http://", 7) == 0)
		url += 7;
	return strspn(url, "0123456789.:[]/") == strlen(url);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (dir == NULL)
		setup();
	FUZZ_CHECK(tu_write_file(dir, "weightd.conf", data, size) == 0);
	wd_config c;
	FUZZ_CHECK(wd_config_init(&c) == WT_OK);
	wt_errbuf err;
	err.msg[0] = '\0';
	if (fuzz_note("wd_config_load_file", wd_config_load_file(&c, conf, &err), &err) != WT_OK) {
		/* "DIR/weightd.conf:LINE: ..." or "DIR/weightd.conf: ..." */
		size_t n = strlen(conf);
		FUZZ_CHECK(strncmp(err.msg, conf, n) == 0 && err.msg[n] == ':');
		wd_config_free(&c);
		return 0;
	}
	check_accepted(&c);
	err.msg[0] = '\0';
	if (numeric_metrics(c.metrics_listen) &&
	    fuzz_note("wd_config_check", wd_config_check(&c, &err), &err) != WT_OK)
		FUZZ_CHECK(err.msg[0] != '\0');
	wd_config_free(&c);
	return 0;
}
