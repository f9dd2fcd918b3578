package main

import (
	"net"
	"os"
	"strconv"
	"time"
)

// sdNotify sends a state ("READY=1", "STOPPING=1", "WATCHDOG=1", "STATUS=…") to systemd's
// notification socket. Without $NOTIFY_SOCKET (not started by systemd) it does nothing.
func sdNotify(state string) error {
	addr := os.Getenv("NOTIFY_SOCKET")
	if addr == "" {
		return nil
	}
	if addr[0] == '@' {
		addr = "\x00" + addr[1:] // abstract socket
	}
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Write([]byte(state))
	return err
}

// sdWatchdogInterval is how often systemd expects WATCHDOG=1 (half of WatchdogSec), or 0.
func sdWatchdogInterval() time.Duration {
	usec, err := strconv.ParseInt(os.Getenv("WATCHDOG_USEC"), 10, 64)
	if err != nil || usec <= 0 {
		return 0
	}
	if pid := os.Getenv("WATCHDOG_PID"); pid != "" && pid != strconv.Itoa(os.Getpid()) {
		return 0
	}
	return time.Duration(usec) * time.Microsecond / 2
}
