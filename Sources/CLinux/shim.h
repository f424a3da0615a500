// Linux calls that Swift's Glibc module leaves out, wrapped where their C types do not import
// cleanly (epoll_event is a packed struct on x86_64).
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <malloc.h>
#include <spawn.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

// accept4 and pipe2 are declared by glibc only under _GNU_SOURCE.
int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);
int pipe2(int fds[2], int flags);
// glibc 2.34; declared only under _GNU_SOURCE. The tests' spawner closes every inherited
// descriptor from 3 on with it, as Foundation's Process does.
int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);

/// A descriptor that becomes readable when the process `pid` ends (Linux 5.3), or -1 with errno
/// set (ENOSYS where the kernel or a seccomp filter does not offer it).
static inline int hexd_pidfd_open(pid_t pid) {
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}

/// Gives the calling thread the lowest priority, nice 19 (Linux keeps a niceness per thread): its
/// work runs when nothing else of the process's wants the CPU. 0, or -1 with errno set.
static inline int hexd_lower_thread_priority(void) {
    return setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
}

// sync_file_range is declared by glibc only under _GNU_SOURCE.
int sync_file_range(int fd, int64_t offset, int64_t count, unsigned int flags);

/// Starts writing the dirty pages of `count` bytes of `fd` from `offset` to the disk, without
/// waiting for them (SYNC_FILE_RANGE_WRITE): a later fdatasync then has only the rest to wait
/// for. 0, or -1 with errno set.
static inline int hexd_start_writeback(int fd, int64_t offset, int64_t count) {
    return sync_file_range(fd, offset, count, 2 /* SYNC_FILE_RANGE_WRITE */);
}

/// Makes glibc serve every allocation of 128 KiB or more with its own mapping, returned to the
/// system when freed. By default glibc raises that threshold after each such free, so the
/// buffers of large lines would be carved from the heap and stay resident after use.
static inline void hexd_return_large_allocations(void) {
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
}

/// Gives the system back the free memory of every malloc arena (after a burst of large buffers).
static inline void hexd_trim_memory(void) {
    malloc_trim(0);
}

/// One readiness event: what happened, and the token given when the descriptor was armed.
struct hexd_event {
    uint32_t events;
    uint64_t token;
};

static const uint32_t HEXD_EPOLLIN = EPOLLIN;
static const uint32_t HEXD_EPOLLOUT = EPOLLOUT;
static const uint32_t HEXD_EPOLLERR = EPOLLERR;
static const uint32_t HEXD_EPOLLHUP = EPOLLHUP;
static const uint32_t HEXD_EPOLLRDHUP = EPOLLRDHUP;
static const uint32_t HEXD_EPOLLONESHOT = EPOLLONESHOT;

static inline int hexd_epoll_create(void) {
    return epoll_create1(EPOLL_CLOEXEC);
}

static inline int hexd_eventfd(void) {
    return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

/// epoll_ctl with `op` EPOLL_CTL_ADD (1), EPOLL_CTL_DEL (2) or EPOLL_CTL_MOD (3).
static inline int hexd_epoll_ctl(int epoll, int op, int fd, uint32_t events, uint64_t token) {
    struct epoll_event event;
    event.events = events;
    event.data.u64 = token;
    return epoll_ctl(epoll, op, fd, &event);
}

/// epoll_wait into an array of unpacked events; at most 256 at a time.
static inline int hexd_epoll_wait(int epoll, struct hexd_event *out, int maximum, int timeout) {
    struct epoll_event events[256];
    if (maximum > 256) maximum = 256;
    int count = epoll_wait(epoll, events, maximum, timeout);
    for (int index = 0; index < count; index++) {
        out[index].events = events[index].events;
        out[index].token = events[index].data.u64;
    }
    return count;
}

/// A netlink socket (nonblocking, close-on-exec) that becomes readable when a link, or an IPv4 or
/// IPv6 address, of this host changes; or -1 with errno set.
static inline int hexd_interface_watch_socket(void) {
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) return -1;
    struct sockaddr_nl address = {0};
    address.nl_family = AF_NETLINK;
    address.nl_groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR;
    if (bind(fd, (struct sockaddr *)&address, sizeof address) < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

// The Linux ABI's values for what a datagram arrived with (netinet/in.h, which this header leaves
// out: included here, its declarations would belong to this module instead of Glibc's).
enum {
    HEXD_IPPROTO_IP = 0,
    HEXD_IP_TTL = 2,
    HEXD_IP_PKTINFO = 8,
    HEXD_IPPROTO_IPV6 = 41,
    HEXD_IPV6_PKTINFO = 50,
    HEXD_IPV6_HOPLIMIT = 52,
};

/// IP_PKTINFO's data, as struct in_pktinfo lays it out.
struct hexd_in_pktinfo {
    int interface;
    uint32_t local;
    uint32_t destination;
};

/// IPV6_PKTINFO's data, as struct in6_pktinfo lays it out.
struct hexd_in6_pktinfo {
    uint8_t address[16];
    unsigned int interface;
};

/// Receives one datagram as recvfrom with MSG_TRUNC does (the datagram's whole length returned,
/// even when cut to `length`), with the TTL (IPv4) or hop limit (IPv6) it arrived with in `hops`
/// and the index of the interface it arrived on in `interface`, which the socket asks for with
/// IP_RECVTTL and IP_PKTINFO, or IPV6_RECVHOPLIMIT and IPV6_RECVPKTINFO: -1 and 0 when it came
/// without them.
static inline ssize_t hexd_receive_with_hops(
    int fd, void *buffer, size_t length, struct sockaddr_storage *from, socklen_t *from_length, int *hops,
    unsigned int *interface) {
    struct iovec vector = {.iov_base = buffer, .iov_len = length};
    union {
        struct cmsghdr align;
        char bytes[CMSG_SPACE(sizeof(int)) * 2 + CMSG_SPACE(sizeof(struct hexd_in6_pktinfo)) * 2];
    } control;
    struct msghdr message = {0};
    message.msg_name = from;
    message.msg_namelen = *from_length;
    message.msg_iov = &vector;
    message.msg_iovlen = 1;
    message.msg_control = control.bytes;
    message.msg_controllen = sizeof control.bytes;
    *hops = -1;
    *interface = 0;
    ssize_t count = recvmsg(fd, &message, MSG_TRUNC);
    if (count < 0) return count;
    *from_length = message.msg_namelen;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL;
         header = CMSG_NXTHDR(&message, header)) {
        int ttl = header->cmsg_level == HEXD_IPPROTO_IP && header->cmsg_type == HEXD_IP_TTL;
        int hop_limit = header->cmsg_level == HEXD_IPPROTO_IPV6 && header->cmsg_type == HEXD_IPV6_HOPLIMIT;
        if ((ttl || hop_limit) && header->cmsg_len >= CMSG_LEN(sizeof(int))) {
            int value;
            memcpy(&value, CMSG_DATA(header), sizeof value);
            *hops = value;
        }
        if (header->cmsg_level == HEXD_IPPROTO_IP && header->cmsg_type == HEXD_IP_PKTINFO
            && header->cmsg_len >= CMSG_LEN(sizeof(struct hexd_in_pktinfo))) {
            struct hexd_in_pktinfo info;
            memcpy(&info, CMSG_DATA(header), sizeof info);
            *interface = info.interface > 0 ? (unsigned int)info.interface : 0;
        }
        if (header->cmsg_level == HEXD_IPPROTO_IPV6 && header->cmsg_type == HEXD_IPV6_PKTINFO
            && header->cmsg_len >= CMSG_LEN(sizeof(struct hexd_in6_pktinfo))) {
            struct hexd_in6_pktinfo info;
            memcpy(&info, CMSG_DATA(header), sizeof info);
            *interface = info.interface;
        }
    }
    return count;
}

/// Where the termination handler writes: the write end of `TerminationSignals`' pipe. Static in a
/// header, so each module that calls these gets its own copy: HexNet's `TerminationSignals` alone
/// may.
static int hexd_termination_pipe = -1;

/// Writes the signal's number, one byte, to the pipe (write is async-signal-safe).
static void hexd_termination_handler(int signal) {
    int saved = errno;
    unsigned char number = (unsigned char)signal;
    (void)write(hexd_termination_pipe, &number, 1);
    errno = saved;
}

/// Catches SIGTERM and SIGINT with a handler that writes their number to `writeEnd`: whichever
/// thread the kernel delivers one to (libdispatch's main thread waits in sigsuspend with every
/// signal unblocked), it reaches the pipe; none is lost, none ends the process by itself.
/// Returns 0, or -1 with errno set.
static inline int hexd_catch_termination_signals(int writeEnd) {
    hexd_termination_pipe = writeEnd;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = hexd_termination_handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    if (sigaction(SIGTERM, &action, NULL) != 0) return -1;
    return sigaction(SIGINT, &action, NULL);
}
