package sandbox

import "golang.org/x/sys/unix"

// This file is the seccomp policy as data: every syscall the sandbox refuses, when, and why.
// seccomp.go turns it into a filter; review this table, not the matcher.
//
// The filter's default action is to allow: seccomp here removes kernel attack surface and the
// operations Landlock cannot see, while Landlock decides which files and ports may be used.
// Syscalls of a foreign architecture (for example i386 int 0x80 on x86_64, or x32) kill the
// process.

// gate says which profile permission lifts a rule; without that permission the rule applies.
type gate int

const (
	always         gate = iota // applies to every profile
	exceptSpawn                // lifted by Profile.Spawn
	exceptUDP                  // lifted by a non-empty Profile.ConnectUDP
	exceptUnix                 // lifted by Profile.Unix
	exceptInet                 // lifted by any TCP or UDP port in the profile
	exceptMetadata             // lifted by Profile.Metadata
)

// cmpOp is how an argument is compared.
type cmpOp int

const (
	maskedEq cmpOp = iota // arg & mask == value
	notEq                 // arg != value (all 64 bits)
	greater               // arg > value (all 64 bits)
)

// argCmp is one condition on a syscall argument.
type argCmp struct {
	arg   uint
	op    cmpOp
	mask  uint64 // maskedEq only
	value uint64
}

// syscallRule refuses the named syscalls when every condition in all holds (no conditions: always).
type syscallRule struct {
	names []string
	errno unix.Errno // EPERM unless said otherwise
	gate  gate
	all   []argCmp
	why   string
}

// int32Arg compares the low 32 bits only: the kernel reads int arguments from the low half of the
// register, so comparing all 64 bits would let garbage in the high half slip past an equality.
func int32Arg(arg uint, value uint64) argCmp {
	return argCmp{arg: arg, op: maskedEq, mask: 0xffffffff, value: value}
}

func flagSet(arg uint, flag uint64) argCmp {
	return argCmp{arg: arg, op: maskedEq, mask: flag, value: flag}
}

// execFD is the descriptor through which the trampoline starts the confined program: when
// spawning is denied, execveat stays allowed on this descriptor number only (with AT_EMPTY_PATH),
// and Landlock still requires the file to be an Exec path.
const execFD = 1023

// ioprioWhoProcess is IOPRIO_WHO_PROCESS (linux/ioprio.h): ioprio_set's which for one process.
const ioprioWhoProcess = 1

// socketTypeMask is SOCK_TYPE_MASK: the socket type without SOCK_NONBLOCK and SOCK_CLOEXEC.
const socketTypeMask = 0xf

// namespaceCloneFlags are the clone(2) flags that create namespaces (CLONE_NEWTIME only exists for
// unshare and clone3, which are refused outright).
var namespaceCloneFlags = []uint64{
	unix.CLONE_NEWNS, unix.CLONE_NEWCGROUP, unix.CLONE_NEWUTS, unix.CLONE_NEWIPC,
	unix.CLONE_NEWUSER, unix.CLONE_NEWPID, unix.CLONE_NEWNET,
}

// recentSyscalls are numbers for syscalls newer than the libseccomp this may be built with.
// Since Linux 5.1 (424) syscall numbers are the same on every architecture but alpha, ia64 and
// mips, which Shield does not support.
var recentSyscalls = map[string]int{
	"setxattrat":     463,
	"removexattrat":  466,
	"open_tree_attr": 467,
	"file_setattr":   469,
}

var seccompTable = buildTable()

func buildTable() []syscallRule {
	t := []syscallRule{
		{names: []string{"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "process_madvise", "kcmp"},
			why: "reading, writing or stealing from other processes"},
		// Landlock scopes ptrace and signals to the sandbox, not these: a process of the same user
		// could otherwise starve or slow the engine.
		{names: []string{"prlimit64", "sched_setaffinity", "sched_setscheduler", "sched_setparam", "sched_setattr"},
			all: []argCmp{{arg: 0, op: notEq, value: 0}},
			why: "changing another process's (or thread's) resource limits or scheduling; only pid 0, the caller, may be named"},
		{names: []string{"migrate_pages", "move_pages", "get_robust_list"},
			all: []argCmp{{arg: 0, op: notEq, value: 0}},
			why: "moving another process's memory between NUMA nodes or reading its robust-futex list (an address leak); only pid 0, the caller, may be named"},
		{names: []string{"process_mrelease"},
			why: "reaping another (dying) process's memory"},
		// Priorities have a scope argument (which) as well as an id (who): with PRIO_PGRP or
		// PRIO_USER, who=0 means the caller's process group or the caller's user, so who=0 alone
		// would let a process running as root renice every root process on the host.
		{names: []string{"setpriority"}, all: []argCmp{{arg: 0, op: notEq, value: unix.PRIO_PROCESS}},
			why: "changing the priority of a process group or of every process of a user; only PRIO_PROCESS with who=0, the caller, is allowed"},
		{names: []string{"ioprio_set"}, all: []argCmp{{arg: 0, op: notEq, value: ioprioWhoProcess}},
			why: "changing the I/O priority of a process group or of every process of a user; only IOPRIO_WHO_PROCESS with who=0, the caller, is allowed"},
		{names: []string{"setpriority", "ioprio_set"}, all: []argCmp{{arg: 1, op: notEq, value: 0}},
			why: "changing another process's priority; only who=0, the caller, may be named"},
		// kill(0) signals the caller's process group (which may hold the engine), kill(-1) every
		// process the caller may signal, kill(-pgid) a whole group. A positive pid names one
		// process: Landlock (ABI 6) scopes those to the sandbox; seccomp cannot, as the filter
		// does not know the caller's pid. tkill, tgkill, rt_sigqueueinfo and rt_tgsigqueueinfo
		// refuse ids <= 0 themselves.
		{names: []string{"kill"}, all: []argCmp{int32Arg(0, 0)},
			why: "signalling the caller's whole process group (pid 0)"},
		{names: []string{"kill"}, all: []argCmp{flagSet(0, 0x80000000)},
			why: "signalling every process (pid -1) or a whole process group (pid < -1)"},
		{names: []string{"mount", "umount2", "pivot_root", "chroot",
			"fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "open_tree_attr", "mount_setattr"},
			why: "changing the mount table (the new mount API too), which would reshape what Landlock sees"},
		{names: []string{"unshare", "setns"},
			why: "entering or creating namespaces (user namespaces expose far more kernel code)"},
		{names: []string{"bpf", "perf_event_open"},
			why: "eBPF and perf: large kernel attack surface"},
		{names: []string{"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module"},
			why: "replacing or extending the kernel"},
		{names: []string{"keyctl", "add_key", "request_key"},
			why: "the kernel keyring is not namespaced and holds other processes' secrets"},
		{names: []string{"userfaultfd"},
			why: "used to win kernel races in exploits"},
		{names: []string{"io_uring_setup", "io_uring_enter", "io_uring_register"},
			why: "io_uring performs I/O outside the syscalls seccomp sees"},
		{names: []string{"personality"},
			why: "execution domains change how the kernel interprets later syscalls"},
		{names: []string{"memfd_create", "memfd_secret"},
			why: "Landlock does not restrict files of internal filesystems: a memfd could be executed whatever the exec paths say"},
		{names: []string{"open_by_handle_at", "uselib"},
			why: "opening files without a path walk"},
		{names: []string{"reboot", "swapon", "swapoff", "syslog", "acct", "quotactl", "iopl", "ioperm",
			"fanotify_init", "settimeofday", "clock_settime", "clock_adjtime", "vhangup", "lookup_dcookie"},
			why: "host administration"},
		{names: []string{"ioctl"}, all: []argCmp{int32Arg(1, unix.TIOCSTI)},
			why: "TIOCSTI injects keystrokes into an inherited terminal"},
		{names: []string{"ioctl"}, all: []argCmp{int32Arg(1, unix.TIOCLINUX)},
			why: "TIOCLINUX can inject keystrokes into a virtual console"},

		// File metadata. Landlock does not restrict it: without these rules a process could change
		// the mode, owner, attributes or times of any file its user owns, in the profile or not.
		{names: []string{"chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat",
			"setxattr", "lsetxattr", "fsetxattr", "setxattrat", "removexattr", "lremovexattr", "fremovexattr", "removexattrat",
			"file_setattr", "utime", "utimes", "futimesat", "utimensat"}, gate: exceptMetadata,
			why: "changing file metadata, which Landlock does not restrict"},

		// Processes.
		{names: []string{"clone3"}, errno: unix.ENOSYS,
			why: "clone3 passes its flags in memory seccomp cannot read; ENOSYS makes libc fall back to clone, whose flags are checked"},
		{names: []string{"fork", "vfork", "execve"}, gate: exceptSpawn,
			why: "spawning processes"},
		{names: []string{"clone"}, gate: exceptSpawn, all: []argCmp{{arg: 0, op: maskedEq, mask: unix.CLONE_THREAD, value: 0}},
			why: "spawning processes (clone without CLONE_THREAD is fork)"},
		{names: []string{"execveat"}, gate: exceptSpawn, all: []argCmp{{arg: 0, op: notEq, value: execFD}},
			why: "spawning processes (only the trampoline's descriptor may be executed)"},
		{names: []string{"execveat"}, gate: exceptSpawn, all: []argCmp{{arg: 4, op: maskedEq, mask: unix.AT_EMPTY_PATH, value: 0}},
			why: "spawning processes (only the trampoline's descriptor itself may be executed)"},

		// Sockets. Landlock rules cover TCP (ABI 4) and UDP (ABI 10) only, so seccomp keeps every
		// other protocol out.
		{names: []string{"socket"}, all: []argCmp{int32Arg(2, unix.IPPROTO_MPTCP)},
			why: "MPTCP sockets bypass Landlock's TCP rules (Go's net.Listen uses MPTCP by default)"},
		{names: []string{"socket"}, all: []argCmp{{arg: 2, op: greater, value: unix.IPPROTO_UDP}},
			why: "only protocols 0, TCP and UDP (SCTP, UDP-Lite, MPTCP... escape Landlock)"},
		{names: []string{"socket", "socketpair"}, gate: exceptUnix, all: []argCmp{int32Arg(0, unix.AF_UNIX)},
			why: "unix sockets (below Landlock ABI 9 connect reaches any named socket)"},
		{names: []string{"socket", "socketpair"}, gate: exceptInet, all: []argCmp{int32Arg(0, unix.AF_INET)},
			why: "IPv4 sockets when the profile has no port"},
		{names: []string{"socket", "socketpair"}, gate: exceptInet, all: []argCmp{int32Arg(0, unix.AF_INET6)},
			why: "IPv6 sockets when the profile has no port"},
	}
	for proto := uint64(1); proto < unix.IPPROTO_UDP; proto++ {
		if proto == unix.IPPROTO_TCP {
			continue
		}
		t = append(t, syscallRule{names: []string{"socket"}, all: []argCmp{int32Arg(2, proto)},
			why: "only protocols 0, TCP and UDP"})
	}
	for _, family := range []uint64{unix.AF_INET, unix.AF_INET6} {
		for typ := uint64(0); typ <= socketTypeMask; typ++ {
			switch typ {
			case unix.SOCK_STREAM:
				continue
			case unix.SOCK_DGRAM:
				t = append(t, syscallRule{names: []string{"socket"}, gate: exceptUDP,
					all: []argCmp{int32Arg(0, family), {arg: 1, op: maskedEq, mask: socketTypeMask, value: typ}},
					why: "UDP when the profile allows none (Landlock below ABI 10 does not see UDP)"})
			default:
				t = append(t, syscallRule{names: []string{"socket"},
					all: []argCmp{int32Arg(0, family), {arg: 1, op: maskedEq, mask: socketTypeMask, value: typ}},
					why: "IP sockets other than stream and datagram (raw, packet, SCTP seqpacket)"})
			}
		}
	}
	// Every address family but unix, IPv4 and IPv6 (netlink, packet, vsock, bluetooth, alg...).
	for family := uint64(0); family < 64; family++ {
		switch family {
		case unix.AF_UNIX, unix.AF_INET, unix.AF_INET6:
			continue
		}
		t = append(t, syscallRule{names: []string{"socket", "socketpair"}, all: []argCmp{int32Arg(0, family)},
			why: "address families other than unix, IPv4 and IPv6"})
	}
	t = append(t, syscallRule{names: []string{"clone"}, all: []argCmp{flagSet(0, unix.CLONE_PARENT)},
		why: "making the new process a child of the caller's parent (the engine), out of the sandbox's process tree"})
	for _, flag := range namespaceCloneFlags {
		t = append(t, syscallRule{names: []string{"clone"}, all: []argCmp{flagSet(0, flag)},
			why: "creating namespaces"})
	}
	return t
}
