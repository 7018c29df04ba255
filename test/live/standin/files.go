package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// runCP copies one regular file: cp SRC DST, where DST may be a directory.
// The mode of SRC is kept. It is what extract-agent.sh runs in the agent image.
func runCP(args []string) error {
	if len(args) != 2 || strings.HasPrefix(args[0], "-") || strings.HasPrefix(args[1], "-") {
		return errors.New("the stand-in cp copies one file: cp SRC DST (no options)")
	}
	src, dst := args[0], args[1]
	if fi, err := os.Stat(dst); err == nil && fi.IsDir() {
		dst = filepath.Join(dst, filepath.Base(src))
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", src)
	}
	tmp := dst + ".standin-cp"
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(tmp)
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	if err := out.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Chmod(tmp, fi.Mode().Perm()); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, dst)
}

// DBScript is the script the database unit runs with /bin/bash.
const DBScript = "start_db.sh"

// runBash is the image's /bin/bash: it runs start_db.sh (the database) and
// refuses anything else, so a unit that expects a real shell fails loudly.
func runBash(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) != 1 || filepath.Base(args[0]) != DBScript {
		return fmt.Errorf("this image's /bin/bash is the lab stand-in: it only runs %s, not %q", DBScript, strings.Join(args, " "))
	}
	if _, err := os.Stat(args[0]); err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	return runDB(ctx, getenv, stdout)
}

// runDB stands in for PostgreSQL: it accepts TCP connections on
// DB_PORT/PGPORT (5432) so that the service finds its database up, closes
// them at once, and stays up until stopped.
func runDB(ctx context.Context, getenv func(string) string, stdout io.Writer) error {
	port := getenv("PGPORT")
	if port == "" {
		port = getenv("DB_PORT")
	}
	if port == "" {
		port = "5432"
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", net.JoinHostPort("", port))
	if err != nil {
		return fmt.Errorf("database stand-in: %w", err)
	}
	fmt.Fprintf(stdout, "database stand-in listening on %s (database %q, user %q, uid %d)\n",
		ln.Addr(), getenv("POSTGRESQL_DATABASE"), getenv("POSTGRESQL_USER"), os.Getuid())
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("database stand-in: %w", err)
		}
		c.Close()
	}
}

// runComponent is the entrypoint of images the lab only mirrors and pulls.
func runComponent(args []string, getenv func(string) string, stdout io.Writer) error {
	name := getenv("STANDIN_COMPONENT")
	if name == "" {
		return errors.New("STANDIN_COMPONENT is not set in the image")
	}
	fmt.Fprintf(stdout, "stand-in for release component %s (args %q): nothing to do in the lab\n", name, args)
	return nil
}
