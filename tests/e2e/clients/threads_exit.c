/*
 * Many busy threads, then the whole process ends at once, several threads
 * racing through the kernel's exit path together.
 * usage: threads_exit N exit CODE   a side thread calls exit(CODE) while the others spin
 *        threads_exit N wait        spin until killed by a signal ("ready" on stdout first)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile int go;

static void *spin(void *arg)
{
	while (!go)
		;
	for (;;)
		;
	return arg;
}

static void *exiter(void *arg)
{
	while (!go)
		;
	exit(atoi(arg));
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	int n = atoi(argv[1]);
	pthread_t t;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t, NULL, spin, NULL))
			return 2;
	if (!strcmp(argv[2], "exit") && argc > 3) {
		if (pthread_create(&t, NULL, exiter, argv[3]))
			return 2;
		go = 1;
		for (;;)
			pause();
	}
	printf("ready\n");
	fflush(stdout);
	go = 1;
	for (;;)
		pause();
}
