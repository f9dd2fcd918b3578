package sandbox

/*
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

// clone_flags creates a child with the raw clone syscall and flags (plus SIGCHLD); the child exits
// at once without running any Go code. Returns 0 on success or the errno of clone. A child that is
// not the caller's (CLONE_PARENT) is left to its parent to reap.
static int clone_flags(unsigned long flags) {
	long pid = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
	if (pid < 0) {
		return errno;
	}
	if (pid == 0) {
		syscall(SYS_exit_group, 0);
	}
	int status;
	while ((flags & CLONE_PARENT) == 0 && waitpid((pid_t)pid, &status, 0) < 0 && errno == EINTR) {
	}
	return 0;
}
*/
import "C"

import "syscall"

// cloneNewUser creates (and reaps) a process in a new user namespace. unshare(CLONE_NEWUSER) cannot
// serve as the probe: the kernel refuses it with EINVAL in any multi-threaded process, and every Go
// process is one. The seccomp rules refuse unshare, and clone with CLONE_NEWUSER, alike.
func cloneNewUser() error {
	return cloneFlags(C.CLONE_NEWUSER)
}

// cloneFlags creates (and, unless CLONE_PARENT is among flags, reaps) a process made by clone with
// flags.
func cloneFlags(flags uint64) error {
	if rc := C.clone_flags(C.ulong(flags)); rc != 0 {
		return syscall.Errno(rc)
	}
	return nil
}
