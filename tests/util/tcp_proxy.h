/*
 * tcp_proxy.h — a loopback TCP forwarder for tests: clients connect to its
 * port, each connection is relayed to 127.0.0.1:target. tcp_proxy_down closes
 * the listener and every relayed connection (both sides), as the kernel does
 * for a killed process: the clients see their connections end and further
 * connects refused until tcp_proxy_up listens on the same port again. The
 * server behind it never closes anything itself, so a test's "restart" does
 * not depend on the server library's own close paths. Test code only.
 */
#ifndef WT_TESTS_TCP_PROXY_H
#define WT_TESTS_TCP_PROXY_H

typedef struct tcp_proxy tcp_proxy;

/* Listen on 127.0.0.1 (an ephemeral port) and relay to 127.0.0.1:target_port. */
tcp_proxy *tcp_proxy_start(int target_port);
int tcp_proxy_port(const tcp_proxy *p);
/* Close the listener and every relayed connection; returns when done. */
void tcp_proxy_down(tcp_proxy *p);
/* Listen again on the same port (retried while the port is busy). */
void tcp_proxy_up(tcp_proxy *p);
/* Connections relayed now. */
int tcp_proxy_n_conns(tcp_proxy *p);
void tcp_proxy_stop(tcp_proxy *p);

#endif
