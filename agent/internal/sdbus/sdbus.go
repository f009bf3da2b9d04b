// Package sdbus is the agent's connection to systemd's manager over
// D-Bus, for the job as a systemd unit (--job-unit): go-systemd's dbus
// package, behind the few calls the agent makes.
package sdbus

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"

	"github.com/coreos/go-systemd/v22/dbus"

	"github.com/lanleader/lanleader/agent/internal/proc"
)

// Conn is a connection to systemd on the system bus, made at its first
// use and made again after the bus dropped it. Any goroutine may use it.
type Conn struct {
	mu sync.Mutex
	c  *dbus.Conn
}

// conn is the live connection, dialled when needed.
func (c *Conn) conn(ctx context.Context) (*dbus.Conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c != nil && c.c.Connected() {
		return c.c, nil
	}
	if c.c != nil {
		c.c.Close()
		c.c = nil
	}
	d, err := dbus.NewSystemConnectionContext(ctx)
	if err != nil {
		// Debian's dbus-daemon drops the connections of a dynamic
		// user (DynamicUser= without a static user of that name).
		return nil, fmt.Errorf("cannot reach systemd on the system bus (a DynamicUser= service needs a static user of its name for it): %w", err)
	}
	c.c = d
	return d, nil
}

// Close closes the connection.
func (c *Conn) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c != nil {
		c.c.Close()
		c.c = nil
	}
}

// StartUnit starts name (mode "replace") and waits for the start job's
// result: "done", "failed", "canceled", "timeout", "dependency" or
// "skipped".
func (c *Conn) StartUnit(ctx context.Context, name string) (string, error) {
	d, err := c.conn(ctx)
	if err != nil {
		return "", err
	}
	ch := make(chan string, 1)
	if _, err := d.StartUnitContext(ctx, name, "replace", ch); err != nil {
		return "", err
	}
	return wait(ctx, ch)
}

// StopUnit stops name and waits for the stop job to end.
func (c *Conn) StopUnit(ctx context.Context, name string) error {
	d, err := c.conn(ctx)
	if err != nil {
		return err
	}
	ch := make(chan string, 1)
	if _, err := d.StopUnitContext(ctx, name, "replace", ch); err != nil {
		return err
	}
	res, err := wait(ctx, ch)
	if err == nil && res != "done" {
		err = fmt.Errorf("systemd's stop job ended with %q", res)
	}
	return err
}

func wait(ctx context.Context, ch <-chan string) (string, error) {
	select {
	case r := <-ch:
		return r, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// KillUnit sends sig to every process of name.
func (c *Conn) KillUnit(ctx context.Context, name string, sig syscall.Signal) error {
	d, err := c.conn(ctx)
	if err != nil {
		return err
	}
	return d.KillUnitWithTarget(ctx, name, dbus.All, int32(sig))
}

// UnitState reads name's ActiveState and its service's Result and main
// process's exit.
func (c *Conn) UnitState(ctx context.Context, name string) (proc.UnitState, error) {
	d, err := c.conn(ctx)
	if err != nil {
		return proc.UnitState{}, err
	}
	var st proc.UnitState
	p, err := d.GetUnitPropertyContext(ctx, name, "ActiveState")
	if err != nil {
		return st, err
	}
	st.ActiveState, _ = p.Value.Value().(string)
	sp, err := d.GetUnitTypePropertiesContext(ctx, name, "Service")
	if err != nil {
		return st, err
	}
	st.Result, _ = sp["Result"].(string)
	st.MainCode, _ = sp["ExecMainCode"].(int32)
	st.MainStatus, _ = sp["ExecMainStatus"].(int32)
	return st, nil
}

// UnitInfo reads name's LoadState ("loaded", "not-found", "bad-setting",
// "masked"...) and the units it is bound to: its BindsTo= and PartOf=.
func (c *Conn) UnitInfo(ctx context.Context, name string) (load string, boundTo []string, err error) {
	d, err := c.conn(ctx)
	if err != nil {
		return "", nil, err
	}
	props, err := d.GetUnitPropertiesContext(ctx, name)
	if err != nil {
		return "", nil, err
	}
	load, _ = props["LoadState"].(string)
	for _, k := range []string{"BindsTo", "PartOf"} {
		v, _ := props[k].([]string)
		boundTo = append(boundTo, v...)
	}
	return load, boundTo, nil
}

// OwnUnit is the unit this process runs in ("lanleader.service", or a
// scope when started from a shell).
func (c *Conn) OwnUnit(ctx context.Context) (string, error) {
	d, err := c.conn(ctx)
	if err != nil {
		return "", err
	}
	name, err := d.GetUnitNameByPID(ctx, uint32(os.Getpid()))
	if err != nil {
		return "", err
	}
	if name == "" {
		return "", errors.New("systemd names no unit for this process")
	}
	return name, nil
}
