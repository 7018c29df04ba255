package live

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"time"
)

// configCDDrive is the QEMU drive id of the second CD drive
// (VMConfig.ConfigCD).
const configCDDrive = "cfgcd"

// InsertCD puts the image at path into the guest's second CD drive, as
// virtual media would: the tray closes with the new medium in it.
func (v *VM) InsertCD(ctx context.Context, path string) error {
	return v.qmpCommand(ctx, "blockdev-change-medium", map[string]any{
		"device": configCDDrive, "filename": path, "format": "raw", "read-only-mode": "read-only"})
}

// EjectCD removes the medium from the guest's second CD drive.
func (v *VM) EjectCD(ctx context.Context) error {
	return v.qmpCommand(ctx, "eject", map[string]any{"device": configCDDrive, "force": true})
}

// qmpCommand runs one QMP command on the guest's monitor socket.
func (v *VM) qmpCommand(ctx context.Context, command string, args map[string]any) error {
	if v.qmp == "" {
		return fmt.Errorf("%s has no QMP socket (VMConfig.ConfigCD)", v.Name)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", v.qmp)
	if err != nil {
		return fmt.Errorf("%s: QMP: %w", v.Name, err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	r := bufio.NewReader(conn)
	// reply skips the greeting and events, and returns the command's answer.
	reply := func() error {
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return err
			}
			var m struct {
				QMP    json.RawMessage `json:"QMP"`
				Event  string          `json:"event"`
				Return json.RawMessage `json:"return"`
				Error  *struct {
					Class, Desc string
				} `json:"error"`
			}
			if err := json.Unmarshal(line, &m); err != nil {
				return fmt.Errorf("QMP answered %q: %w", line, err)
			}
			switch {
			case m.Error != nil:
				return errors.New(m.Error.Class + ": " + m.Error.Desc)
			case m.Return != nil:
				return nil
			}
		}
	}
	send := func(cmd string, a map[string]any) error {
		b, err := json.Marshal(map[string]any{"execute": cmd, "arguments": a})
		if err != nil {
			return err
		}
		if _, err := conn.Write(append(b, '\n')); err != nil {
			return err
		}
		return reply()
	}
	if err := send("qmp_capabilities", map[string]any{}); err != nil {
		return fmt.Errorf("%s: QMP: %w", v.Name, err)
	}
	if err := send(command, args); err != nil {
		return fmt.Errorf("%s: QMP %s: %w", v.Name, command, err)
	}
	return nil
}
