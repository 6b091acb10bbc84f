"""Float literals print exactly as MLIR prints them (``printFloatValue``).

Expected texts were printed by real MLIR (jaxlib 0.10.2) for values given as bit patterns.
"""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shardy_ref.ir.floatfmt import bits_to_float, format_float, round_float

# (type, input bits, MLIR output, what the value is)
ORACLE_TABLE = [
    ('f32', '0x3DCCCCCD', '1.000000e-01', '0.1'),
    ('f32', '0x3E4CCCCD', '2.000000e-01', '0.2'),
    ('f32', '0x3E99999A', '3.000000e-01', '0.3'),
    ('f32', '0x3F333333', '0.699999988', '0.7'),
    ('f32', '0x322BCC77', '9.99999993E-9', '1e-8'),
    ('f32', '0x40490FDB', '3.14159274', 'pi'),
    ('f32', '0x60AD78EC', '1.000000e+20', '1e20'),
    ('f32', '0x4CEB79A3', '0x4CEB79A3', '123456789.0'),
    ('f32', '0x3F666666', '0.899999976', '0.9 (0.899999976)'),
    ('f32', '0x3F7FFFFE', '0.99999988', '0.9999999'),
    ('f32', '0x1', '1.401300e-45', '2^-149'),
    ('f32', '0x3EAAAAAB', '0.333333343', '1/3'),
    ('f32', '0x4B800000', '0x4B800000', '16777216.0'),
    ('f32', '0x4996B438', '0x4996B438', '1234567.0'),
    ('f32', '0x3F800000', '1.000000e+00', '1.0'),
    ('f32', '0x42C80000', '1.000000e+02', '100.0'),
    ('f32', '0xC0200000', '-2.500000e+00', '-2.5'),
    ('f32', '0x7F7FFFFF', '3.40282347E+38', 'FLT_MAX'),
    ('f32', '0x800000', '1.17549435E-38', 'FLT_MIN (2^-126)'),
    ('f32', '0x0', '0.000000e+00', '0.0'),
    ('f32', '0x80000000', '-0.000000e+00', '-0.0'),
    ('f32', '0x7F800000', '0x7F800000', '+inf'),
    ('f32', '0xFF800000', '0xFF800000', '-inf'),
    ('f32', '0x7FC00000', '0x7FC00000', 'NaN'),
    ('f32', '0x3A83126F', '1.000000e-03', '1.0e-3'),
    ('f32', '0x414570A4', '1.234000e+01', '12.34'),
    ('f32', '0x501502F9', '1.000000e+10', '1e10'),
    ('f32', '0x449A5000', '1.234500e+03', '1234.5'),
    ('f32', '0x45800080', '4096.0625', '4096.0625'),
    ('f32', '0x477FE000', '6.550400e+04', '65504.0'),
    ('f64', '0x3FB999999999999A', '1.000000e-01', '0.1'),
    ('f64', '0x3FD5555555555555', '0.33333333333333331', '1/3'),
    ('f64', '0x400921FB54442D18', '3.1415926535897931', 'pi'),
    ('f64', '0x3E7AD7F29ABCAF48', '9.9999999999999995E-8', '1e-7'),
    ('f64', '0x419D6F3454000000', '0x419D6F3454000000', '123456789.0'),
    ('f64', '0x1', '4.940660e-324', '2^-1074'),
    ('f64', '0x7FEFFFFFFFFFFFFF', '1.7976931348623157E+308', 'DBL_MAX'),
    ('f64', '0x3FF199999999999A', '1.100000e+00', '1.1'),
    ('f64', '0x7E37E43C8800759C', '1.000000e+300', '1e300'),
    ('f64', '0x4340000000000000', '0x4340000000000000', '2^53'),
    ('f64', '0x3FD3333333333334', '0.30000000000000004', '0.1+0.2'),
    ('f64', '0x43E56A95319D63E1', '1.2345678901234567E+19', '1.2345678901234567e19'),
    ('f64', '0x7FF8000000000000', '0x7FF8000000000000', 'NaN'),
    ('f64', '0x405EDD2F1A9FBE77', '1.234560e+02', '123.456'),
    ('f16', '0x2E66', '9.997550e-02', '0.1'),
    ('f16', '0x3555', '3.332520e-01', '1/3'),
    ('f16', '0x7BFF', '6.550400e+04', '65504'),
    ('f16', '0x1', '5.960460e-08', '2^-24'),
    ('f16', '0x4433', '4.199220e+00', '4.2'),
    ('f16', '0x4248', '3.140630e+00', 'pi (3.140625)'),
    ('f16', '0x6800', '2.048000e+03', '2048'),
    ('f16', '0x7C00', '0x7C00', 'inf'),
    ('f16', '0x7E00', '0x7E00', 'NaN'),
    ('f16', '0x8000', '-0.000000e+00', '-0.0'),
    ('bf16', '0x3DCD', '1.000980e-01', '0.1'),
    ('bf16', '0x3EAB', '3.339840e-01', '1/3'),
    ('bf16', '0x4049', '3.140630e+00', '3.14159'),
    ('bf16', '0x60AD', '9.972770e+19', '1e20'),
    ('bf16', '0x4380', '2.560000e+02', '257 (→256)'),
    ('bf16', '0x7FC0', '0x7FC0', 'NaN'),
    ('f8E4M3FN', '0x38', '1.000000e+00', '1.0'),
    ('f8E4M3FN', '0x7E', '4.480000e+02', '448'),
    ('f8E4M3FN', '0x7F', '0x7F', 'NaN'),
    ('f8E5M2', '0x1', '1.525880e-05', '2^-16'),
    ('f8E5M2', '0x7C', '0x7C', 'inf'),
    ('f8E4M3FNUZ', '0x80', '0x80', 'NaN'),
    ('f8E8M0FNU', '0x0', '5.877470e-39', '2^-127'),
    ('f4E2M1FN', '0x7', '6.000000e+00', '6.0'),
]

@pytest.mark.parametrize(("type_name", "bits", "expected", "what"), ORACLE_TABLE)
def test_matches_mlir(type_name, bits, expected, what):
    value = bits_to_float(int(bits, 16), type_name)
    assert format_float(value, type_name) == expected, what


@given(st.floats(allow_nan=False, width=32))
def test_f32_text_reads_back_to_the_same_value(x):
    text = format_float(x, "f32")
    if text.startswith(("0x", "-0x")):
        assert bits_to_float(int(text.lstrip("-"), 16), "f32") == x
    else:
        assert round_float(float(text), "f32") == x


@given(st.floats(allow_nan=False))
def test_f64_text_reads_back_to_the_same_value(x):
    text = format_float(x, "f64")
    if text.startswith(("0x", "-0x")):
        assert bits_to_float(int(text.lstrip("-"), 16), "f64") == x
    else:
        assert float(text) == x
