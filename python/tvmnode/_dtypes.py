"""DataType literals: tvmnode.float32, tvmnode.int8, tvmnode.float8_e4m3fn, ...

The names array libraries use (numpy 2 spells its boolean `bool`, as here).
They live in a module of their own because one of them is `bool`; any other
DataType is `tvmnode.dtype("...")` or `DataType.from_dlpack_data_type`.
"""
from ._core import DataType

bool = DataType("bool")
int8 = DataType("int8")
int16 = DataType("int16")
int32 = DataType("int32")
int64 = DataType("int64")
uint8 = DataType("uint8")
uint16 = DataType("uint16")
uint32 = DataType("uint32")
uint64 = DataType("uint64")
float16 = DataType("float16")
float32 = DataType("float32")
float64 = DataType("float64")
bfloat16 = DataType("bfloat16")
float8_e3m4 = DataType("float8_e3m4")
float8_e4m3 = DataType("float8_e4m3")
float8_e4m3b11fnuz = DataType("float8_e4m3b11fnuz")
float8_e4m3fn = DataType("float8_e4m3fn")
float8_e4m3fnuz = DataType("float8_e4m3fnuz")
float8_e5m2 = DataType("float8_e5m2")
float8_e5m2fnuz = DataType("float8_e5m2fnuz")
float8_e8m0fnu = DataType("float8_e8m0fnu")
float6_e2m3fn = DataType("float6_e2m3fn")
float6_e3m2fn = DataType("float6_e3m2fn")
float4_e2m1fn = DataType("float4_e2m1fn")
# two float4s in a byte; torch calls it float4_e2m1fn_x2
float4_e2m1fnx2 = DataType("float4_e2m1fnx2")
float4_e2m1fn_x2 = float4_e2m1fnx2

LITERALS = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
            "float16", "float32", "float64", "bfloat16", "float8_e3m4", "float8_e4m3",
            "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
            "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn",
            "float4_e2m1fn", "float4_e2m1fnx2", "float4_e2m1fn_x2")
