/*
 * A minimal HTTPS client for the e2e tests: one GET over OpenSSL, the answer's
 * status line on stdout, then exit. Built statically by the tests, so its
 * SSL_write/SSL_read live in the executable itself, as in programs that link
 * a TLS library in (BoringSSL-style).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s PORT PATH\n", argv[0]);
		return 2;
	}
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(atoi(argv[1])) };
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("connect");
		return 1;
	}
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	SSL *ssl = SSL_new(ctx);
	SSL_set_fd(ssl, fd);
	if (SSL_connect(ssl) != 1) {
		fprintf(stderr, "handshake failed\n");
		return 1;
	}
	char req[512], resp[4096];
	int n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
			 argv[2]);
	if (SSL_write(ssl, req, n) != n)
		return 1;
	int got = 0, r;
	while (got < (int)sizeof(resp) - 1 && (r = SSL_read(ssl, resp + got, sizeof(resp) - 1 - got)) > 0)
		got += r;
	resp[got] = 0;
	fwrite(resp, 1, strcspn(resp, "\r\n"), stdout);
	putchar('\n');
	SSL_shutdown(ssl);
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	close(fd);
	return strncmp(resp, "HTTP/1.1 ", 9) ? 1 : 0;
}
