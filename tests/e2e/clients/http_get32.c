/*
 * Built with -m32: a 32-bit (ia32) process making an HTTP/1.1 request over
 * TCP, whose syscall numbers mean other things in the x86-64 table (its read
 * is close there, its pipe is connect). It also makes a pipe and reads and
 * writes it, and calls getegid (50, our listen) with a bound TCP socket's fd
 * in the register that is the first argument of an x86-64 syscall: an agent
 * reading it as ours would report a listen that never was.
 * usage: http_get32 PORT PATH   prints the status line, then "bound PORT"; exits 0 on a response
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	int p[2];
	char b[4096];
	if (pipe(p) || write(p[1], "x", 1) != 1 || read(p[0], b, 1) != 1)
		return 3;
	int bound = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in ba = { .sin_family = AF_INET };
	socklen_t blen = sizeof(ba);
	ba.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bound < 0 || bind(bound, (struct sockaddr *)&ba, sizeof(ba)) ||
	    getsockname(bound, (struct sockaddr *)&ba, &blen))
		return 7;
	long egid;
	__asm__ volatile("int $0x80" : "=a"(egid) : "a"(50), "D"(bound) : "memory");
	if (egid < 0)
		return 8;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(atoi(argv[1])) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)))
		return 4;
	int n = snprintf(b, sizeof(b), "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", argv[2]);
	if (write(fd, b, n) != n)
		return 5;
	n = read(fd, b, sizeof(b) - 1);
	if (n <= 0)
		return 6;
	b[n] = 0;
	b[strcspn(b, "\r\n")] = 0;
	puts(b);
	printf("bound %d\n", ntohs(ba.sin_port));
	close(fd);
	return 0;
}
