//! `tn.Shape` and `tn.Tensor`.
//!
//! Both have public C layouts, so a shape's dimensions and a tensor's
//! `DLTensor` are read in place: [`Shape::as_slice`] is a `&[i64]` and
//! [`Tensor::as_slice`] borrows the element data with no copy.
//!
//! Tensor storage is shared by every view of it and may be written by C or
//! Python at any time, so writing through a `&[T]` obtained from a shared
//! tensor would be a data race Rust cannot see. Safe writes are therefore
//! limited to filling a tensor nobody else holds yet
//! ([`Tensor::from_slice`]); [`Tensor::as_mut_slice_unchecked`] is the
//! `unsafe` escape hatch.

use tvmnode_sys as sys;

use crate::error::{check_count, check_typed, Error, ErrorKind, Result};
use crate::{object_handle, DataType, Device, Object};

object_handle! {
    /// An immutable list of dimensions (`tn.Shape`).
    pub struct Shape: Object, key "tn.Shape", index sys::TN_TYPE_SHAPE;
}

impl Shape {
    /// A new shape; every dimension must be `>= 0`.
    pub fn new(dims: &[i64]) -> Result<Shape> {
        // SAFETY: `dims` valid for its length.
        check_typed(unsafe { sys::tn_shape_new(dims.as_ptr(), dims.len() as i64) })
    }

    /// The dimensions, borrowed from the object.
    pub fn as_slice(&self) -> &[i64] {
        // SAFETY: public TnShapeObj layout; the dimensions live as long as the
        // object.
        unsafe {
            let s = &*(self.as_ptr() as *const sys::TnShapeObj);
            if s.ndim == 0 {
                &[]
            } else {
                std::slice::from_raw_parts(s.data, s.ndim as usize)
            }
        }
    }

    /// Product of the dimensions (1 for a scalar).
    pub fn numel(&self) -> Result<i64> {
        // SAFETY: live shape.
        check_count(unsafe { sys::tn_shape_numel(self.as_ptr()) })
    }
}

/// Only the dimensions: a shape is used like a slice more than like an
/// object (the object is still reachable through `as_object`).
impl AsRef<[i64]> for Shape {
    fn as_ref(&self) -> &[i64] {
        self.as_slice()
    }
}

impl PartialEq<[i64]> for Shape {
    fn eq(&self, other: &[i64]) -> bool {
        self.as_slice() == other
    }
}

impl<const N: usize> PartialEq<[i64; N]> for Shape {
    fn eq(&self, other: &[i64; N]) -> bool {
        self.as_slice() == other
    }
}

object_handle! {
    /// An n-dimensional array (`tn.Tensor`): a DLTensor inside an object.
    pub struct Tensor: Object, key "tn.Tensor", index sys::TN_TYPE_TENSOR;
}

/// A Rust element type with a DLPack data type.
pub trait Element: Copy + 'static {
    /// Its data type.
    const DTYPE: DataType;
}

macro_rules! elements {
    ($($t:ty => $code:ident $bits:literal),*) => {$(
        impl Element for $t {
            const DTYPE: DataType = DataType::new(sys::$code as u8, $bits, 1);
        }
    )*};
}
elements!(f32 => kDLFloat 32, f64 => kDLFloat 64, i8 => kDLInt 8, i16 => kDLInt 16,
          i32 => kDLInt 32, i64 => kDLInt 64, u8 => kDLUInt 8, u16 => kDLUInt 16,
          u32 => kDLUInt 32, u64 => kDLUInt 64);

impl Tensor {
    /// A new compact tensor of zeros on `device` (CPU only for now).
    pub fn empty(shape: &[i64], dtype: DataType, device: Device) -> Result<Tensor> {
        // SAFETY: `shape` valid for its length.
        check_typed(unsafe { sys::tn_tensor_empty(shape.as_ptr(), shape.len() as i32, dtype.0, device.0) })
    }

    /// A new CPU tensor holding a copy of `data` (row-major; its length must
    /// be the product of `shape`).
    pub fn from_slice<T: Element>(shape: &[i64], data: &[T]) -> Result<Tensor> {
        let t = Tensor::empty(shape, T::DTYPE, Device::cpu(0))?;
        let numel: i64 = shape.iter().product();
        if numel as usize != data.len() {
            return Err(Error::new(
                ErrorKind::ValueError,
                format!("shape {shape:?} has {numel} elements, data has {}", data.len()),
            ));
        }
        // SAFETY: the tensor was just made: nobody else holds it, it is
        // compact, of dtype T, with exactly `data.len()` elements.
        unsafe { t.as_mut_slice_unchecked::<T>()?.copy_from_slice(data) };
        Ok(t)
    }

    /// The DLTensor, borrowed from the object.
    pub fn dltensor(&self) -> &sys::DLTensor {
        // SAFETY: public TnTensorObj layout.
        unsafe { &(*(self.as_ptr() as *const sys::TnTensorObj)).dl }
    }

    /// The dimensions.
    pub fn shape(&self) -> &[i64] {
        let dl = self.dltensor();
        if dl.ndim == 0 {
            &[]
        } else {
            // SAFETY: `ndim` dimensions, alive with the object.
            unsafe { std::slice::from_raw_parts(dl.shape, dl.ndim as usize) }
        }
    }

    /// The element type.
    pub fn dtype(&self) -> DataType {
        DataType(self.dltensor().dtype)
    }

    /// The device.
    pub fn device(&self) -> Device {
        Device(self.dltensor().device)
    }

    /// Size of the elements in bytes.
    pub fn nbytes(&self) -> usize {
        // SAFETY: live tensor.
        unsafe { sys::tn_tensor_nbytes(self.as_ptr()) }.max(0) as usize
    }

    /// Whether the tensor is compact row-major.
    pub fn is_contiguous(&self) -> bool {
        // SAFETY: live tensor.
        let mut contiguous = 0;
        // A live tn.Tensor handle cannot fail the type check.
        unsafe { sys::tn_tensor_is_contiguous(self.as_ptr(), &mut contiguous) == 0 && contiguous != 0 }
    }

    fn check_readable<T: Element>(&self) -> Result<usize> {
        if self.dtype() != T::DTYPE {
            return Err(Error::new(
                ErrorKind::TypeError,
                format!("tensor has dtype {}, not {}", self.dtype(), T::DTYPE),
            ));
        }
        if self.device().device_type() != sys::kDLCPU || !self.is_contiguous() {
            return Err(Error::new(
                ErrorKind::ValueError,
                "only compact CPU tensors can be viewed as a slice",
            ));
        }
        Ok(self.nbytes() / std::mem::size_of::<T>())
    }

    /// The elements of a compact CPU tensor of dtype `T`, borrowed.
    pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
        let n = self.check_readable::<T>()?;
        if n == 0 {
            return Ok(&[]);
        }
        let dl = self.dltensor();
        // SAFETY: compact, CPU, dtype checked; the storage is aligned to 64
        // bytes (or to the producer's alignment for DLPack imports, which
        // DLPack requires to fit the dtype) and lives as long as the object.
        Ok(unsafe {
            std::slice::from_raw_parts((dl.data as *const u8).add(dl.byte_offset as usize).cast::<T>(), n)
        })
    }

    /// The elements as a vector.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        Ok(self.as_slice::<T>()?.to_vec())
    }

    /// The elements of a compact CPU tensor, writable.
    ///
    /// # Safety
    /// No one else (another handle, a view, C or Python code on any thread)
    /// may read or write the storage while the slice lives.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn as_mut_slice_unchecked<T: Element>(&self) -> Result<&mut [T]> {
        let n = self.check_readable::<T>()?;
        if n == 0 {
            return Ok(&mut []);
        }
        let dl = self.dltensor();
        Ok(std::slice::from_raw_parts_mut(
            (dl.data as *mut u8).add(dl.byte_offset as usize).cast::<T>(),
            n,
        ))
    }
}

impl Shape {
    /// The dimensions, in order.
    pub fn iter(&self) -> std::slice::Iter<'_, i64> {
        self.as_slice().iter()
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.as_slice().len()
    }
}

impl std::ops::Index<usize> for Shape {
    type Output = i64;
    fn index(&self, i: usize) -> &i64 {
        &self.as_slice()[i]
    }
}
