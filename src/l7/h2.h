/*
 * HTTP/2 and gRPC (src/l7/h2.c): a parser with the protocol table's
 * interface (proto.h), kept out of the table because its requests are
 * counted in HTTP's families (L7_FAMILY_HTTP). Each message's code is the
 * status label Coroot gives HTTP/2: "2xx"-style, or "grpc:OK"-style.
 */
#ifndef NODESCOPE_L7_H2_H
#define NODESCOPE_L7_H2_H

#include "proto.h"

extern const struct l7_proto l7_proto_http2;

#endif
