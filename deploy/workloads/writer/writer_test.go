package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func readRecords(t *testing.T, path string) []Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Record
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		var r Record
		if err := json.Unmarshal(scanner.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", scanner.Text(), err)
		}
		out = append(out, r)
	}
	return out
}

func TestWriterAppendsNumberedRecordsUntilCancelled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "writer.log")
	// A line already there (another writer's) is kept: the log is appended to, never truncated.
	if err := os.WriteFile(path, Record{PodUID: "old", Node: "n0"}.Line(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	w := Writer{Path: path, Interval: 5 * time.Millisecond, Identity: Identity{PodUID: "u1", Node: "n1", PID: 7}}
	go func() { done <- w.Run(ctx) }()
	for len(readRecords(t, path)) < 6 {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Run returned %v, want context.Canceled", err)
	}
	records := readRecords(t, path)
	if records[0].PodUID != "old" {
		t.Fatalf("the earlier line was lost: %+v", records[0])
	}
	var lastWall, lastMono int64
	for i, r := range records[1:] {
		if r.PodUID != "u1" || r.Node != "n1" || r.PID != 7 || r.Seq != int64(i) {
			t.Fatalf("record %d: %+v", i, r)
		}
		if r.WallUs < lastWall || r.MonoUs < lastMono {
			t.Fatalf("record %d goes back in time: %+v", i, r)
		}
		lastWall, lastMono = r.WallUs, r.MonoUs
	}
}

func TestRunRefusesAMissingIdentity(t *testing.T) {
	t.Setenv("POD_UID", "")
	t.Setenv("NODE_NAME", "n1")
	if code := run([]string{"--log", filepath.Join(t.TempDir(), "l")}); code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
}

func TestAnOpenFailureIsAnError(t *testing.T) {
	w := Writer{Path: filepath.Join(t.TempDir(), "missing", "log"), Interval: time.Millisecond, Identity: Identity{PodUID: "u", Node: "n"}}
	if err := w.Run(context.Background()); err == nil {
		t.Fatal("no error for a log in a missing directory")
	}
}
