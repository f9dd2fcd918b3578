package main

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

func TestSdNotify(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	if err := sdNotify("READY=1"); err != nil {
		t.Errorf("without NOTIFY_SOCKET: %v", err)
	}
	for _, name := range []string{filepath.Join(t.TempDir(), "notify"), "@shield-test-" + strconv.Itoa(os.Getpid())} {
		addr := name
		if addr[0] == '@' {
			addr = "\x00" + addr[1:]
		}
		l, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: addr, Net: "unixgram"})
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv("NOTIFY_SOCKET", name)
		if err := sdNotify("READY=1"); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 64)
		l.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, _, err := l.ReadFromUnix(buf)
		l.Close()
		if err != nil || string(buf[:n]) != "READY=1" {
			t.Errorf("%s: got %q %v", name, buf[:n], err)
		}
	}
	t.Setenv("WATCHDOG_USEC", "30000000")
	t.Setenv("WATCHDOG_PID", strconv.Itoa(os.Getpid()))
	if d := sdWatchdogInterval(); d != 15*time.Second {
		t.Errorf("watchdog interval %s", d)
	}
	t.Setenv("WATCHDOG_PID", "1")
	if d := sdWatchdogInterval(); d != 0 {
		t.Errorf("watchdog for another pid: %s", d)
	}
}
