module github.com/iapverify/iapverify/bindings/go

go 1.19
