module bloop

go 1.26.8

require (
	github.com/beevik/etree v1.8.1
	github.com/go-delve/delve v1.27.2
	github.com/google/pprof v0.0.0-20261016150608-1facf8f91b50
	github.com/ianlancetaylor/demangle v0.0.0-20260724033716-83e58baca724
	github.com/klauspost/compress v1.20.4
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	golang.org/x/arch v0.32.0
	golang.org/x/sys v0.49.0
)

require (
	golang.org/x/telemetry v0.0.0-20241106142447-58a1122356f5 // indirect
	golang.org/x/text v0.40.0 // indirect
)
