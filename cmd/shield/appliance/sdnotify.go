package appliance

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"time"
)

// SdNotify sends state (for example "READY=1", "STOPPING=1", "WATCHDOG=1") to the service
// manager on $NOTIFY_SOCKET, a unix datagram socket; a name starting with '@' is an abstract
// socket. Without $NOTIFY_SOCKET (not started by systemd with Type=notify) it does nothing.
func SdNotify(state string) error {
	name := os.Getenv("NOTIFY_SOCKET")
	if name == "" {
		return nil
	}
	if name[0] != '/' && name[0] != '@' {
		return fmt.Errorf("sd_notify: NOTIFY_SOCKET %q is neither a path nor an abstract name", name)
	}
	// Go's net package maps a leading '@' to the abstract namespace.
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("sd_notify: dial %s: %w", name, err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(state)); err != nil {
		return fmt.Errorf("sd_notify: send %q: %w", state, err)
	}
	return nil
}

// SdWatchdogInterval is how often systemd expects WATCHDOG=1 ($WATCHDOG_USEC), or 0 when the
// watchdog is off or meant for another process ($WATCHDOG_PID names a different pid). Send at
// half this interval.
func SdWatchdogInterval() time.Duration {
	us, err := strconv.ParseInt(os.Getenv("WATCHDOG_USEC"), 10, 64)
	if err != nil || us <= 0 {
		return 0
	}
	if p := os.Getenv("WATCHDOG_PID"); p != "" {
		if pid, err := strconv.Atoi(p); err != nil || pid != os.Getpid() {
			return 0
		}
	}
	return time.Duration(us) * time.Microsecond
}
