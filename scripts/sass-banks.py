#!/usr/bin/env python3
"""The FFMAs of a kernel in an sm_90 cubin against a register-bank model, without cuobjdump.

    scripts/sass-banks.py CUBIN [KERNEL] [--order N]

Each FFMA reads up to three registers (a, b, c); an operand whose value the previous FFMA left in
the operand-reuse cache (the SASS `.reuse` flag) is not read from the register file. With two
banks (register index mod 2; Volta and later, per the microbenchmark papers) two reads from one
bank take a second cycle. Prints the count of FFMAs by (register reads, most in one bank) and the
share the model calls conflicted, for mod 2 and mod 4; --order N prints N FFMAs' operands in issue
order (aXb, rA/rB: reused). perf-log 131: this share tracks the measured dispatch stalls of the
hopper-simt points (ncu) to a constant factor.

The encoding (128-bit instructions), as the published reverse-engineering of Volta-and-later SASS
has it: opcode in bits 0-11 (0x223: FFMA with register operands), Rd 16-23, Ra 24-31, Rb 32-39,
Rc 64-71, the control bits from 105 on, the reuse flags at 122-125 (bit 0 a, bit 1 b, bit 2 c).
Consistent with the defaults' code (2096 such FFMAs: 2048 a K tile plus the epilogue's) but not
yet compared with cuobjdump's listing (`cuobjdump -sass` on the GPU host prints the `.reuse` flags): do that before
trusting a count. The kernel's code is the ELF section .text.KERNEL (read with readelf).
"""
import argparse
import collections
import struct
import subprocess
import sys

FFMA = 0x223


def text(cubin, kernel):
    out = subprocess.run(['readelf', '-S', '-W', cubin], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if '] .text.' + kernel + ' ' in line:
            f = line.split(']')[1].split()
            off, size = int(f[3], 16), int(f[4], 16)
            with open(cubin, 'rb') as fh:
                return fh.read()[off:off + size]
    sys.exit(f'sass-banks: no section .text.{kernel} in {cubin}')


def field(x, lo, n):
    return (x >> lo) & ((1 << n) - 1)


def ffmas(code):
    for i in range(0, len(code), 16):
        lo, hi = struct.unpack('<QQ', code[i:i + 16])
        x = (hi << 64) | lo
        if field(x, 0, 12) == FFMA:
            yield dict(at=i // 16, a=field(x, 24, 8), b=field(x, 32, 8), c=field(x, 64, 8), reuse=field(x, 122, 4))


def reads(f):
    """The registers an FFMA reads from the file: not RZ (255), not from the reuse cache, each once."""
    return {f[k] for bit, k in ((1, 'a'), (2, 'b'), (4, 'c')) if not f['reuse'] & bit and f[k] != 255}


def main():
    ap = argparse.ArgumentParser(description='FFMAs of an sm_90 cubin against a register-bank model')
    ap.add_argument('cubin')
    ap.add_argument('kernel', nargs='?', default='gemm_hopper_simt')
    ap.add_argument('--order', type=int, default=0, help='print this many FFMAs in issue order')
    a = ap.parse_args()
    fs = list(ffmas(text(a.cubin, a.kernel)))
    if not fs:
        sys.exit(f'sass-banks: {a.kernel} has no FFMA')
    used = collections.Counter(bin(f['reuse'] & 7).count('1') for f in fs)
    print(f'{a.kernel}: {len(fs)} FFMA; operands from the reuse cache: ' +
          ', '.join(f'{n}: {used[n]}' for n in sorted(used)))
    for banks in (2, 4):
        hist = collections.Counter()
        for f in fs:
            r = reads(f)
            per = collections.Counter(x % banks for x in r)
            hist[(len(r), max(per.values()) if per else 0)] += 1
        bad = sum(c for (n, worst), c in hist.items() if worst > 1)
        print(f'  mod {banks}: {bad} conflicted ({bad / len(fs):.1%}); (reads, most in one bank): ' +
              ', '.join(f'{k}: {hist[k]}' for k in sorted(hist)))
    prev, out = None, []
    for f in fs[len(fs) // 3:len(fs) // 3 + a.order]:
        gap = '' if prev is None or f['at'] == prev + 1 else '| '
        out.append(f"{gap}{f['a']}x{f['b']}{'rA' if f['reuse'] & 1 else ''}{'rB' if f['reuse'] & 2 else ''}")
        prev = f['at']
    if out:
        print(' '.join(out))


if __name__ == '__main__':
    main()
