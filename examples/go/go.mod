module github.com/iapverify/iapverify/examples/go

go 1.19

require github.com/iapverify/iapverify/bindings/go v0.0.0

replace github.com/iapverify/iapverify/bindings/go => ../../bindings/go
