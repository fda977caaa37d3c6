/*
 * registry_int.h — shared by registry.c (the registry file, registrations
 * and their opening threads) and regreq.c (the REGISTER / UNREGISTER
 * requests, and the thread that answers REGISTERs parked on an open).
 */
#ifndef WEIGHTD_REGISTRY_INT_H
#define WEIGHTD_REGISTRY_INT_H

#include "weightd/server_int.h"

/* Serializes register/unregister (change + file rewrite) and guards every
 * wd_regjob and the server's reg_* fields. Taken before m->lk and e->lk. */
extern pthread_mutex_t wd_reg_lk;

/* One registration's open (guarded by wd_reg_lk). */
typedef struct wd_regjob wd_regjob;
struct wd_regjob {
	struct wd_regjob *next;
	wd_server *s; /* its end wakes s->reg_wake */
	wd_models *m;
	char *name, *uri; /* uri: the spec (modelspec.c) */
	char *show;       /* the spec for messages (wd_spec_show) */
	pthread_t th;
	bool started;      /* th to join */
	bool done;         /* the outcome below is set */
	bool unregistered; /* unregistered while it opened */
	unsigned waiters;  /* requests holding it: not freed meanwhile */
	int rv;
	wt_errbuf err;
	char revision[80]; /* wd_snap.revision */
	size_t n_tensors;
	uint64_t bytes;
};

/* Can name=uri be written as one line of the file and read back the same? */
int wd_registry_check_entry(const char *name, const char *uri, wt_errbuf *err);
/* The job of name (running or ended), or NULL. Call with wd_reg_lk held. */
wd_regjob *wd_regjob_find(wd_server *s, const char *name);
/* Start registering name -> uri, or find the registration of the same URI
 * running: *job, with one more waiter (drop it under wd_reg_lk when done
 * with it); *job NULL when the same name and URI is registered already
 * (nothing to do). Takes wd_reg_lk. */
int wd_regjob_start(wd_server *s, const char *name, const char *uri, wd_regjob **job,
                    wt_errbuf *err);

#endif
