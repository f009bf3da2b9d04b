// Package systemdtest boots a Debian root under systemd-nspawn, with
// systemd as its init, installs the .deb that packaging/deb.sh builds, and
// checks lanleader.service under a real systemd: READY and STATUS, a
// reload, the watchdog's restart of a frozen agent, a forked job that
// maps W+X memory (a JIT) with and without lanleader-job.conf, --realtime,
// a job_unit:, a stop that leaves no process, and a start that races the
// bind address. The root is made once by debootstrap and cached (see
// CacheDir); every boot runs on an overlay of it.
//
// The checks are probe.sh, run inside the container by a oneshot unit;
// it writes facts, and TestSystemd judges them. Root only, with
// debootstrap and systemd-nspawn (Debian's systemd-container, which
// test.sh installs); it skips otherwise, and with LANLEADER_SYSTEMD=0.
package systemdtest
