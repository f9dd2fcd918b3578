package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// listenNotify opens a unixgram socket standing in for systemd's notification socket.
func listenNotify(t *testing.T, name string) *net.UnixConn {
	t.Helper()
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatalf("listen %s: %v", name, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestSdNotify(t *testing.T) {
	for _, tc := range []struct {
		name string
		addr string
	}{
		{name: "path", addr: filepath.Join(t.TempDir(), "notify.sock")},
		{name: "abstract", addr: fmt.Sprintf("@shield-test-notify-%d-%d", os.Getpid(), time.Now().UnixNano())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := listenNotify(t, tc.addr)
			t.Setenv("NOTIFY_SOCKET", tc.addr)
			for _, state := range []string{"READY=1", "WATCHDOG=1", "STOPPING=1"} {
				if err := sdNotify(state); err != nil {
					t.Fatalf("sdNotify(%q): %v", state, err)
				}
				buf := make([]byte, 256)
				if err := srv.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
					t.Fatal(err)
				}
				n, err := srv.Read(buf)
				if err != nil {
					t.Fatalf("read: %v", err)
				}
				if got := string(buf[:n]); got != state {
					t.Errorf("received %q, want %q", got, state)
				}
			}
		})
	}
}

func TestSdNotifyErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     string
		wantErr bool
	}{
		{name: "unset is a no-op", env: "", wantErr: false},
		{name: "relative name", env: "notify.sock", wantErr: true},
		{name: "nobody listening", env: filepath.Join(t.TempDir(), "absent.sock"), wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("NOTIFY_SOCKET", tc.env)
			err := sdNotify("READY=1")
			if (err != nil) != tc.wantErr {
				t.Errorf("sdNotify: err = %v, want error: %v", err, tc.wantErr)
			}
		})
	}
}

func TestSdWatchdogInterval(t *testing.T) {
	self := strconv.Itoa(os.Getpid())
	for _, tc := range []struct {
		name string
		usec string
		pid  string
		want time.Duration
	}{
		{name: "unset", want: 0},
		{name: "30s", usec: "30000000", want: 30 * time.Second},
		{name: "for this pid", usec: "1000", pid: self, want: time.Millisecond},
		{name: "for another pid", usec: "1000", pid: "1", want: 0},
		{name: "garbage", usec: "soon", want: 0},
		{name: "negative", usec: "-5", want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("WATCHDOG_USEC", tc.usec)
			t.Setenv("WATCHDOG_PID", tc.pid)
			if got := sdWatchdogInterval(); got != tc.want {
				t.Errorf("sdWatchdogInterval() = %v, want %v", got, tc.want)
			}
		})
	}
}
