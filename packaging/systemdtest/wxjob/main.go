// Command wxjob stands for a job with a JIT (a JVM, Node.js): it maps
// memory writable and executable at once, as a JIT's code cache does,
// writes to it, says so on stdout, and runs until SIGTERM or SIGINT. If
// the mapping is refused (MemoryDenyWriteExecute=yes) it says so and
// exits with status 1. The systemd suite runs it as lanleader's job and as
// a job unit.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

func main() {
	mem, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE|unix.PROT_EXEC, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		fmt.Printf("wxjob: mmap W+X refused: %v (pid %d)\n", err, os.Getpid())
		os.Exit(1)
	}
	mem[0] = 0xc3 // ret
	fmt.Printf("wxjob: mapped W+X, pid %d, LANLEADER_TERM=%s\n", os.Getpid(), os.Getenv("LANLEADER_TERM"))
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	s := <-sig
	fmt.Printf("wxjob: %v, exiting\n", s)
}
