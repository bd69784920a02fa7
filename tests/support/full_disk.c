// A disk that fills up, for one process (LD_PRELOAD=libsimrun_full_disk.so): the writes of the
// process under SIMRUN_FULL_DISK_DIR that need new space may take SIMRUN_FULL_DISK_BYTES
// in all, and then fail with ENOSPC, as on a full disk. A write needs new space where it
// reaches past what its file holds (its size, or what fallocate reserved past it), so a write
// into space reserved earlier succeeds, as it would on a real full disk. Where
// SIMRUN_FULL_DISK_RANK is set, only the MPI rank of that number (OMPI_COMM_WORLD_RANK,
// PMI_RANK) sees the disk full; the others write freely. Where SIMRUN_FULL_DISK_SUFFIX is set,
// only files whose names end with it count (the others take no space).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static atomic_llong spent;

// The bytes this process may still allocate under the directory; -1: the disk is not full here.
static long long quota(void) {
    static long long value = -2;
    if (value != -2) return value;
    const char* bytes = getenv("SIMRUN_FULL_DISK_BYTES");
    const char* rank = getenv("SIMRUN_FULL_DISK_RANK");
    const char* mine = getenv("OMPI_COMM_WORLD_RANK");
    if (mine == NULL) mine = getenv("PMI_RANK");
    value = bytes == NULL ? -1 : atoll(bytes);
    if (rank != NULL && (mine == NULL || atoi(rank) != atoi(mine))) value = -1;
    return value;
}

// Whether descriptor fd is a file under SIMRUN_FULL_DISK_DIR.
static int watched(int fd) {
    const char* dir = getenv("SIMRUN_FULL_DISK_DIR");
    if (dir == NULL || quota() < 0) return 0;
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    const ssize_t length = readlink(link, path, sizeof path - 1);
    if (length <= 0) return 0;
    path[length] = '\0';
    const size_t length_of_dir = strlen(dir);
    if (strncmp(path, dir, length_of_dir) != 0 || path[length_of_dir] != '/') return 0;
    const char* suffix = getenv("SIMRUN_FULL_DISK_SUFFIX");
    if (suffix == NULL) return 1;
    const size_t length_of_suffix = strlen(suffix);
    return (size_t)length >= length_of_suffix &&
           strcmp(path + length - length_of_suffix, suffix) == 0;
}

// Takes `bytes` of new blocks from the quota; 0 when the disk is full.
static int allocate(long long bytes) {
    if (bytes <= 0) return 1;
    if (atomic_fetch_add(&spent, bytes) + bytes > quota()) {
        atomic_fetch_sub(&spent, bytes);
        return 0;
    }
    return 1;
}

// The end of the space fallocate reserved past each file's end (the files of the directory,
// by device and inode): writes there take no new space, as on a real disk.
static struct {
    dev_t device;
    ino_t inode;
    long long end;
} reserved[256];
static int reserved_files;
static pthread_mutex_t reserved_lock = PTHREAD_MUTEX_INITIALIZER;

// The end of what the file holds (its size, or its reservation), after recording `reserve`
// (0: none) as reserved.
static long long held(const struct stat* status, long long reserve) {
    long long end = status->st_size;
    pthread_mutex_lock(&reserved_lock);
    int i = 0;
    while (i < reserved_files &&
           (reserved[i].device != status->st_dev || reserved[i].inode != status->st_ino)) {
        ++i;
    }
    if (i == reserved_files && reserve > 0 && reserved_files < 256) {
        reserved[reserved_files++] = (typeof(reserved[0])){status->st_dev, status->st_ino, 0};
    }
    if (i < reserved_files) {
        if (reserved[i].end > end) end = reserved[i].end;
        if (reserve > reserved[i].end) reserved[i].end = reserve;
    }
    pthread_mutex_unlock(&reserved_lock);
    return end;
}

// Whether a write of [offset, offset + count) to fd (offset -1: at its file position), or a
// reservation of it, finds room: the part past what the file holds comes from the quota.
static int room_for(int fd, off_t offset, size_t count, int reservation) {
    if (!watched(fd)) return 1;
    if (offset < 0) offset = lseek(fd, 0, SEEK_CUR);
    struct stat status;
    if (fstat(fd, &status) != 0) return 1;
    const long long end = (long long)offset + (long long)count;
    const long long before = held(&status, 0);
    if (!allocate(end - before)) return 0;
    if (reservation) held(&status, end);
    return 1;
}

static size_t total(const struct iovec* parts, int count) {
    size_t sum = 0;
    for (int i = 0; i < count; ++i) sum += parts[i].iov_len;
    return sum;
}

#define NEXT(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

ssize_t write(int fd, const void* data, size_t count) {
    if (!room_for(fd, -1, count, 0)) return errno = ENOSPC, -1;
    return NEXT(write)(fd, data, count);
}

ssize_t pwrite(int fd, const void* data, size_t count, off_t offset) {
    if (!room_for(fd, offset, count, 0)) return errno = ENOSPC, -1;
    return NEXT(pwrite)(fd, data, count, offset);
}

ssize_t pwrite64(int fd, const void* data, size_t count, off_t offset) {
    if (!room_for(fd, offset, count, 0)) return errno = ENOSPC, -1;
    return NEXT(pwrite64)(fd, data, count, offset);
}

ssize_t writev(int fd, const struct iovec* parts, int count) {
    if (!room_for(fd, -1, total(parts, count), 0)) return errno = ENOSPC, -1;
    return NEXT(writev)(fd, parts, count);
}

ssize_t pwritev(int fd, const struct iovec* parts, int count, off_t offset) {
    if (!room_for(fd, offset, total(parts, count), 0)) return errno = ENOSPC, -1;
    return NEXT(pwritev)(fd, parts, count, offset);
}

ssize_t pwritev64(int fd, const struct iovec* parts, int count, off_t offset) {
    if (!room_for(fd, offset, total(parts, count), 0)) return errno = ENOSPC, -1;
    return NEXT(pwritev64)(fd, parts, count, offset);
}

int fallocate(int fd, int mode, off_t offset, off_t length) {
    if (!(mode & FALLOC_FL_PUNCH_HOLE) && !room_for(fd, offset, (size_t)length, 1)) {
        return errno = ENOSPC, -1;
    }
    return NEXT(fallocate)(fd, mode, offset, length);
}

int fallocate64(int fd, int mode, off_t offset, off_t length) {
    if (!(mode & FALLOC_FL_PUNCH_HOLE) && !room_for(fd, offset, (size_t)length, 1)) {
        return errno = ENOSPC, -1;
    }
    return NEXT(fallocate64)(fd, mode, offset, length);
}
