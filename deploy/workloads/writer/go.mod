module rekindle.dev/writer

go 1.26.0
