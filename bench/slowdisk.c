/* A slower disk for one server (bench/slowdisk.py): preloaded (LD_PRELOAD) into every
 * process the benchmark starts, it adds SLOWDISK_FSYNC_US microseconds before each
 * fsync() and fdatasync() of the one process whose command line contains
 * SLOWDISK_CMDLINE (the target's "--server-id=2"); every other process is unchanged.
 * This models a disk whose cache flush takes that much longer (a network volume, a
 * disk without a write cache): the server's own calls still run, so durability is kept.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long delay_us;
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);

/* glibc calls ELF constructors with (argc, argv, envp); /proc may be absent (a chroot) */
__attribute__((constructor)) static void slowdisk_init(int argc, char **argv, char **envp)
{
    (void)envp;
    const char *us = getenv("SLOWDISK_FSYNC_US"), *match = getenv("SLOWDISK_CMDLINE");
    real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    if (!us || !match || !argv)
        return;
    for (int i = 0; i < argc && argv[i]; i++)
        if (strcmp(argv[i], match) == 0)
            delay_us = atol(us);
}

static void slowdisk_wait(void)
{
    if (delay_us > 0) {
        struct timespec ts = {delay_us / 1000000, (delay_us % 1000000) * 1000};
        while (nanosleep(&ts, &ts) != 0) {
        }
    }
}

int fsync(int fd)
{
    slowdisk_wait();
    return real_fsync(fd);
}

int fdatasync(int fd)
{
    slowdisk_wait();
    return real_fdatasync(fd);
}
