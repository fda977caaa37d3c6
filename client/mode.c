/*
 * mode.c — manifest modes (client.h wt_fetch_mode, README "Raw serving"):
 * partitioned, raw (the checkpoint's own tensors) or auto (partitioned, raw when
 * the planner refuses the model or layout), and plan-only layout checks.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_int.h"
#include "proto/wire.h"

static const char *const mode_names[] = {
    [WT_MODE_PARTITIONED] = "partitioned", [WT_MODE_AUTO] = "auto", [WT_MODE_RAW] = "raw"};

const char *wt_fetch_mode_name(int mode)
{
	return mode >= 0 && mode <= WT_MODE_RAW ? mode_names[mode] : NULL;
}

int wt_fetch_mode_from_name(const char *name, int *out, wt_errbuf *err)
{
	for (int i = 0; i <= WT_MODE_RAW; i++)
		if (name != NULL && strcmp(name, mode_names[i]) == 0) {
			*out = i;
			return WT_OK;
		}
	return wt_seterr(err, WT_EINVAL, "unknown mode '%s'; use auto, partitioned or raw",
	                 name ? name : "(null)");
}

/* The raw layout of a request: raw, the caller's include names, all else default. */
static int raw_layout(const wt_layout *l, wt_layout *out, wt_errbuf *err)
{
	wt_layout_init(out);
	out->raw = 1;
	for (uint32_t i = 0; i < l->n_include; i++) {
		int rv = wt_layout_add_include(out, l->include[i], err);
		if (rv != WT_OK) {
			wt_layout_clear(out);
			return rv;
		}
	}
	return WT_OK;
}

/* The partitioned layout of a request: the caller's, without raw and include. */
static int part_layout(const wt_layout *l, wt_layout *out, wt_errbuf *err)
{
	wt_layout_init(out);
	if (wt_layout_copy(out, l) != WT_OK)
		return wt_seterr(err, WT_ENOMEM, "get_manifest: out of memory");
	out->raw = 0;
	for (uint32_t i = 0; i < out->n_include; i++)
		free(out->include[i]);
	free(out->include);
	out->include = NULL;
	out->n_include = 0;
	return WT_OK;
}

static int set_mode(wt_manifest *m, int mode, const char *reason, wt_errbuf *err)
{
	m->mode = mode;
	free(m->mode_reason);
	if ((m->mode_reason = strdup(reason)) == NULL)
		return wt_seterr(err, WT_ENOMEM, "get_manifest: out of memory");
	return WT_OK;
}

/* The raw manifest (mode raw, or auto's fallback with reason). */
static int get_raw(wt_client *c, const char *model, const wt_layout *layout, const char *reason,
                   const client_mreq *q, wt_manifest **out, wt_errbuf *err)
{
	wt_layout rl;
	int rv = raw_layout(layout, &rl, err);
	if (rv != WT_OK)
		return rv;
	rv = client_get_manifest_once(c, model, &rl, q, out, err);
	wt_layout_clear(&rl);
	if (rv == WT_OK && (rv = set_mode(*out, WT_MODE_RAW, reason, err)) != WT_OK) {
		wt_manifest_free(*out);
		*out = NULL;
	}
	return rv;
}

/* Planner refusals auto falls back on: the family or the layout is not supported. */
static bool falls_back(int rv)
{
	return rv == WT_EUNSUPPORTED || rv == WT_ELAYOUT;
}

static int get_auto(wt_client *c, const char *model, const wt_layout *layout, const client_mreq *q,
                    wt_manifest **out, wt_errbuf *err)
{
	wt_layout pl;
	int rv = part_layout(layout, &pl, err);
	if (rv != WT_OK)
		return rv;
	wt_errbuf perr;
	wt_errclear(&perr);
	rv = client_get_manifest_once(c, model, &pl, q, out, &perr);
	wt_layout_clear(&pl);
	if (rv == WT_OK) {
		client_log(c, WT_CLIENT_LOG_INFO, "model '%s': mode auto: partitioned (%s)", model,
		           (*out)->layout_text);
		if ((rv = set_mode(*out, WT_MODE_PARTITIONED, "", err)) != WT_OK) {
			wt_manifest_free(*out);
			*out = NULL;
		}
		return rv;
	}
	if (!falls_back(rv)) {
		if (err != NULL)
			*err = perr;
		return rv;
	}
	char reason[WT_ERRMSG_MAX + 64];
	snprintf(reason, sizeof(reason), "partitioned refused (%s): %s", wt_errname(rv), perr.msg);
	client_log(c, WT_CLIENT_LOG_WARNING, "model '%s': mode auto: serving raw tensors: %s",
	           model, reason);
	return get_raw(c, model, layout, reason, q, out, err);
}

int client_get_manifest_mode(wt_client *c, const char *model, const wt_layout *layout,
                             const client_mreq *q, wt_manifest **out, wt_errbuf *err)
{
	int mode = layout->raw ? WT_MODE_RAW : c->o.mode;
	switch (mode) {
	case WT_MODE_RAW:
		return get_raw(c, model, layout, "", q, out, err);
	case WT_MODE_AUTO:
		return get_auto(c, model, layout, q, out, err);
	default: {
		int rv = client_get_manifest_once(c, model, layout, q, out, err);
		if (rv == WT_OK && (rv = set_mode(*out, WT_MODE_PARTITIONED, "", err)) != WT_OK) {
			wt_manifest_free(*out);
			*out = NULL;
		}
		return rv;
	}
	}
}

int wt_client_get_manifest_opts(wt_client *c, const char *model, const wt_layout *layout,
                                const wt_manifest_opts *opts, wt_manifest **out, wt_errbuf *err)
{
	if (c == NULL || out == NULL)
		return wt_seterr(err, WT_EINVAL, "get_manifest: client and out are required");
	*out = NULL;
	if (model == NULL || model[0] == '\0' || layout == NULL)
		return wt_seterr(err, WT_EINVAL, "get_manifest: model and layout are required");
	wt_manifest_opts o;
	int rv = client_manifest_opts_in(&o, opts, err);
	if (rv != WT_OK)
		return rv;
	client_mreq q = {.cache_only = o.cache_only != 0, .revision = o.revision};
	return client_get_manifest_mode(c, model, layout, &q, out, err);
}

int wt_client_get_manifest(wt_client *c, const char *model, const wt_layout *layout,
                           wt_manifest **out, wt_errbuf *err)
{
	return wt_client_get_manifest_opts(c, model, layout, NULL, out, err);
}

int wt_client_check_layout(wt_client *c, const char *model, const wt_layout *layout, wt_errbuf *err)
{
	if (c == NULL || model == NULL || model[0] == '\0' || layout == NULL)
		return wt_seterr(err, WT_EINVAL,
		                 "check_layout: client, model and layout are required");
	wt_manifest *m = NULL;
	client_mreq q = {.plan_only = true};
	int rv = client_get_manifest_once(c, model, layout, &q, &m, err);
	wt_manifest_free(m);
	return rv;
}

int wt_manifest_mode(const wt_manifest *m)
{
	return m->mode;
}

const char *wt_manifest_mode_reason(const wt_manifest *m)
{
	return m->mode_reason ? m->mode_reason : "";
}

int client_get_manifest_pb(wt_client *c, const char *model, const wt_layout *layout,
                           const wt_manifest_opts *opts, wt_manifest **out, Weights__Reply **reply,
                           wt_errbuf *err)
{
	*out = NULL;
	*reply = NULL;
	if (layout->raw)
		return wt_seterr(err, WT_EINVAL, "get_manifest_pb: a partitioned layout only");
	wt_manifest_opts o;
	int rv = client_manifest_opts_in(&o, opts, err);
	if (rv != WT_OK)
		return rv;
	client_mreq q = {.cache_only = o.cache_only != 0, .revision = o.revision, .keep = reply};
	rv = client_get_manifest_once(c, model, layout, &q, out, err);
	if (rv == WT_OK && (rv = set_mode(*out, WT_MODE_PARTITIONED, "", err)) != WT_OK) {
		wt_manifest_free(*out);
		*out = NULL;
		wire_reply_free(*reply);
		*reply = NULL;
	}
	return rv;
}
