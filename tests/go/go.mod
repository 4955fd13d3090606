module react-conformance/tests/go

go 1.22

require react-conformance/protocol v0.0.0

replace react-conformance/protocol => ../../harnesses/lib/go
