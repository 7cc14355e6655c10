package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// Identity names one writer: a pod (its UID) on a node, and the process within it.
type Identity struct {
	PodUID string
	Node   string
	PID    int
}

// Record is one line of the log. Times are integers of microseconds so that a JSON reader with
// float64 numbers (JavaScript) reads them exactly.
type Record struct {
	PodUID string `json:"podUid"`
	Node   string `json:"node"`
	PID    int    `json:"pid"`
	// Seq counts this process's records from 0.
	Seq int64 `json:"seq"`
	// WallUs is the node's wall clock, microseconds since the Unix epoch.
	WallUs int64 `json:"wallUs"`
	// MonoUs is this process's monotonic clock, microseconds since it started.
	MonoUs int64 `json:"monoUs"`
}

// Line is the record as it is appended: one JSON object and a newline, written in one call. A line
// cut short (the writer died mid-write) has no closing brace or newline, so a reader can tell it.
func (r Record) Line() []byte {
	b, _ := json.Marshal(r) // a struct of strings and integers always marshals
	return append(b, '\n')
}

// Writer appends a record every Interval until its context ends.
type Writer struct {
	Path     string
	Interval time.Duration
	Identity Identity
	// Now is the clock; default time.Now (whose readings carry the monotonic clock).
	Now func() time.Time
}

// Run opens the log with O_APPEND, then writes and fsyncs one record per tick. It returns the
// context's error once cancelled (SIGTERM), or the first write or sync error.
func (w Writer) Run(ctx context.Context) error {
	now := w.Now
	if now == nil {
		now = time.Now
	}
	f, err := os.OpenFile(w.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("open %s: %w", w.Path, err)
	}
	defer f.Close()
	start := now()
	ticker := time.NewTicker(w.Interval)
	defer ticker.Stop()
	for seq := int64(0); ; seq++ {
		t := now()
		r := Record{
			PodUID: w.Identity.PodUID,
			Node:   w.Identity.Node,
			PID:    w.Identity.PID,
			Seq:    seq,
			WallUs: t.UnixMicro(),
			// Sub on two readings of time.Now uses their monotonic parts: no wall-clock step moves it.
			MonoUs: t.Sub(start).Microseconds(),
		}
		if _, err := f.Write(r.Line()); err != nil {
			return fmt.Errorf("append to %s: %w", w.Path, err)
		}
		if err := f.Sync(); err != nil {
			return fmt.Errorf("fsync %s: %w", w.Path, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ticker.C:
		}
	}
}
