//! `DataType` and `Device`: the two DLPack value types an `Any` carries
//! inline.
//!
//! Both are thin `Copy` wrappers over the DLPack structs so that they cross
//! the C boundary by value; parsing and printing go through the C library so
//! that every language spells them the same way (`"float32"`, `"cuda:1"`).

use std::fmt;
use std::str::FromStr;

use tvmnode_sys as sys;

use crate::error::{check, cstring, Error, Result};

/// An element type: `float32`, `int8`, `uint8x4`, `bool`, ...
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct DataType(pub sys::DLDataType);

impl DataType {
    /// `void` (no element type).
    pub const VOID: DataType = DataType::new(sys::kDLOpaqueHandle as u8, 0, 0);
    /// `float32`.
    pub const F32: DataType = DataType::new(sys::kDLFloat as u8, 32, 1);
    /// `float64`.
    pub const F64: DataType = DataType::new(sys::kDLFloat as u8, 64, 1);
    /// `int8`.
    pub const I8: DataType = DataType::new(sys::kDLInt as u8, 8, 1);
    /// `int32`.
    pub const I32: DataType = DataType::new(sys::kDLInt as u8, 32, 1);
    /// `int64`.
    pub const I64: DataType = DataType::new(sys::kDLInt as u8, 64, 1);
    /// `uint8`.
    pub const U8: DataType = DataType::new(sys::kDLUInt as u8, 8, 1);
    /// `bool`.
    pub const BOOL: DataType = DataType::new(sys::kDLBool as u8, 8, 1);

    /// From DLPack's code (`kDLFloat`...), bits and lanes.
    pub const fn new(code: u8, bits: u8, lanes: u16) -> DataType {
        DataType(sys::DLDataType { code, bits, lanes })
    }

    /// Parse `"float32"`, `"int8"`, `"uint8x4"`, `"bool"`, `"bfloat16"`...
    pub fn parse(text: &str) -> Result<DataType> {
        let c = cstring(text)?;
        let mut out = DataType::VOID.0;
        // SAFETY: NUL-terminated text, valid out-pointer.
        check(unsafe { sys::tn_dtype_parse(c.as_ptr(), &mut out) })?;
        Ok(DataType(out))
    }

    /// DLPack type code.
    pub fn code(self) -> u8 {
        self.0.code
    }
    /// Bits per lane.
    pub fn bits(self) -> u8 {
        self.0.bits
    }
    /// Lanes (1 for scalars).
    pub fn lanes(self) -> u16 {
        self.0.lanes
    }
    /// Bytes per element (lanes included), rounded up.
    pub fn size_bytes(self) -> usize {
        (self.0.bits as usize * self.0.lanes as usize).div_ceil(8)
    }
}

impl FromStr for DataType {
    type Err = Error;
    fn from_str(s: &str) -> Result<DataType> {
        DataType::parse(s)
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; 64];
        // SAFETY: buffer and size match; the C side truncates like snprintf.
        let n = unsafe { sys::tn_dtype_print(self.0, buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            return write!(f, "dtype({}, {}, {})", self.0.code, self.0.bits, self.0.lanes);
        }
        let n = (n as usize).min(buf.len() - 1);
        f.write_str(std::str::from_utf8(&buf[..n]).unwrap_or("?"))
    }
}

impl fmt::Debug for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DataType({self})")
    }
}

/// A device: `cpu:0`, `cuda:1`, ...
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Device(pub sys::DLDevice);

impl Device {
    /// CPU device `id`.
    pub const fn cpu(id: i32) -> Device {
        Device(sys::DLDevice {
            device_type: sys::kDLCPU,
            device_id: id,
        })
    }

    /// Parse `"cpu"`, `"cpu:0"`, `"cuda:1"`...
    pub fn parse(text: &str) -> Result<Device> {
        let c = cstring(text)?;
        let mut out = Device::cpu(0).0;
        // SAFETY: NUL-terminated text, valid out-pointer.
        check(unsafe { sys::tn_device_parse(c.as_ptr(), &mut out) })?;
        Ok(Device(out))
    }

    /// DLPack device type (`kDLCPU`...).
    pub fn device_type(self) -> sys::DLDeviceType {
        self.0.device_type
    }
    /// Device ordinal.
    pub fn device_id(self) -> i32 {
        self.0.device_id
    }
}

impl FromStr for Device {
    type Err = Error;
    fn from_str(s: &str) -> Result<Device> {
        Device::parse(s)
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; 64];
        // SAFETY: as for DataType.
        let n = unsafe { sys::tn_device_print(self.0, buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            return write!(f, "device({}, {})", self.0.device_type, self.0.device_id);
        }
        let n = (n as usize).min(buf.len() - 1);
        f.write_str(std::str::from_utf8(&buf[..n]).unwrap_or("?"))
    }
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Device({self})")
    }
}
