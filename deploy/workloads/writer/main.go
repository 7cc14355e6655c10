// rekindle's writer workload: appends one JSON line per tick to a log on its volume and fsyncs it,
// so that after a scenario a checker (lib/observe/two-writers.ts) can tell from the data whether two
// copies of a workload ever wrote to one volume at once. Standard library only; built static.
//
//	writer --log /data/writer.log --interval 100ms
//
// Identity comes from the downward API: POD_UID and NODE_NAME (or --pod-uid, --node).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	flags := flag.NewFlagSet("writer", flag.ContinueOnError)
	logPath := flags.String("log", envOr("WRITER_LOG", "/data/writer.log"), "the log file on the volume (env WRITER_LOG)")
	interval := flags.Duration("interval", 100*time.Millisecond, "time between records")
	podUID := flags.String("pod-uid", os.Getenv("POD_UID"), "this pod's UID (env POD_UID, from the downward API)")
	node := flags.String("node", os.Getenv("NODE_NAME"), "this pod's node (env NODE_NAME, from the downward API)")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if *podUID == "" || *node == "" {
		fmt.Fprintln(os.Stderr, "writer: POD_UID and NODE_NAME (or --pod-uid and --node) must be set")
		return 2
	}
	if *interval <= 0 {
		fmt.Fprintln(os.Stderr, "writer: --interval must be positive")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	w := Writer{Path: *logPath, Interval: *interval, Identity: Identity{PodUID: *podUID, Node: *node, PID: os.Getpid()}}
	if err := w.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(os.Stderr, "writer: %v\n", err)
		return 1
	}
	return 0
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}
