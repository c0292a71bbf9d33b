module bloop

go 1.26.8

require (
	github.com/beevik/etree v1.8.1 // indirect
	github.com/go-delve/delve v1.27.2 // indirect
	github.com/ianlancetaylor/demangle v0.0.0-20260724033716-83e58baca724 // indirect
	golang.org/x/arch v0.32.0 // indirect
)
