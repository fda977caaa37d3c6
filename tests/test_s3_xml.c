/*
 * test_s3_xml.c — the S3 ListObjectsV2 parser (loader/s3_xml.c) on
 * hand-written replies: entities, numeric references, truncation tokens, and
 * every malformed reply refused with WT_ECORRUPT naming the problem.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "loader/s3_int.h"

/* ---- ListObjectsV2 parser ---- */

static int parse(const char *xml, s3_page *pg, wt_errbuf *err)
{
	return s3_parse_list(xml, strlen(xml), "test", pg, err);
}

static void test_s3_xml(void **state)
{
	(void)state;
	s3_page pg;
	wt_errbuf err = {0};
	const char *ok =
	    "<?xml version=\"1.0\"?><ListBucketResult xmlns=\"x\"><Name>b</Name>"
	    "<IsTruncated>true</IsTruncated><NextContinuationToken>t&amp;1</NextContinuationToken>"
	    "<Contents><Key>m/a&amp;b "
	    "&lt;&#233;&#x4E2D;&gt;.bin</Key><LastModified>x</LastModified>"
	    "<ETag>&quot;abc&quot;</ETag><Size>42</Size></Contents>"
	    "<Contents><Key>m/c</Key><Size>0</Size></Contents></ListBucketResult>";
	assert_int_equal(parse(ok, &pg, &err), WT_OK);
	assert_int_equal(pg.n, 2);
	assert_string_equal(pg.objs[0].key, "m/a&b <\xc3\xa9\xe4\xb8\xad>.bin");
	assert_int_equal(pg.objs[0].nbytes, 42);
	assert_string_equal(pg.objs[0].version, "abc");
	assert_string_equal(pg.objs[1].version, "");
	assert_true(pg.truncated);
	assert_string_equal(pg.next_token, "t&1");
	s3_page_clear(&pg);
	assert_int_equal(parse("<ListBucketResult><IsTruncated>false</IsTruncated>"
	                       "</ListBucketResult>",
	                       &pg, &err),
	                 WT_OK);
	assert_int_equal(pg.n, 0);
	assert_false(pg.truncated);
	s3_page_clear(&pg);
	static const struct {
		const char *xml, *msg;
	} bad[] = {
	    {"<Error><Code>NoSuchBucket</Code></Error>", "NoSuchBucket"},
	    {"<ListBucketResult><Contents><Key>a</Key><Size>1</Size></Contents>", "cut short"},
	    {"<ListBucketResult><Contents><Size>1</Size></Contents></ListBucketResult>",
	     "no <Key>"},
	    {"<ListBucketResult><Contents><Key>a</Key></Contents></ListBucketResult>", "no <Size>"},
	    {"<ListBucketResult><Contents><Key>a</Key><Size>-1</Size></Contents>"
	     "</ListBucketResult>",
	     "byte count"},
	    {"<ListBucketResult><Contents><Key>a</Key><Size>99999999999999999999</Size>"
	     "</Contents></ListBucketResult>",
	     "byte count"},
	    {"<ListBucketResult><Contents><Key>a&nbsp;</Key><Size>1</Size></Contents>"
	     "</ListBucketResult>",
	     "bad text"},
	    {"<ListBucketResult><Contents><Key>a&#0;</Key><Size>1</Size></Contents>"
	     "</ListBucketResult>",
	     "bad text"},
	    {"<ListBucketResult><Contents><Key>a&#x110000;</Key><Size>1</Size></Contents>"
	     "</ListBucketResult>",
	     "bad text"},
	    {"<ListBucketResult><Contents><Key>a</Key><Size>1</Size>"
	     "</ListBucketResult>",
	     "not closed"},
	    {"<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>",
	     "no <NextContinuationToken>"},
	    {"<ListBucketResult><IsTruncated>yes</IsTruncated></ListBucketResult>", "want true"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rv = parse(bad[i].xml, &pg, &err);
		if (rv != WT_ECORRUPT || strstr(err.msg, bad[i].msg) == NULL)
			fprintf(stderr, "case %zu: %s: %s\n", i, wt_errname(rv), err.msg);
		assert_int_equal(rv, WT_ECORRUPT);
		assert_non_null(strstr(err.msg, bad[i].msg));
		assert_int_equal(pg.n, 0);
	}
	/* an embedded NUL */
	assert_int_equal(s3_parse_list("<ListBucketResult>\0", 19, "t", &pg, &err), WT_ECORRUPT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_s3_xml),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
