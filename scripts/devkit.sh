#!/bin/sh
# Assemble the device kit (make devkit): from BUILD (a build with
# RPATH $ORIGIN/lib) into DEVKIT, a folder that runs on a bare GPU machine
# with no build step.  It holds the binaries, the CUDA library, the sample
# reward module and the human rewards as prebuilt modules (for a machine
# without NVRTC), every shared library they load that is not part of a
# base Linux system (glibc, libstdc++ and libgcc stay the machine's own;
# CUDA's driver, and cuBLAS and NVRTC where it has them, are the GPU
# machine's), packed into libs.tar.gz to stay well under what a lease may
# carry, the data the checks read (rewards/human, rewards/engine), the
# newest glibc symbol version the binaries need (glibc_needed) and
# device_check.sh.  The binaries lose their debug sections, not their
# symbols.
#
#   sh scripts/devkit.sh BUILD DEVKIT
set -eu
build=$1
kit=$2
cd "$(dirname "$0")/.."
modules=$(ls "$build"/cuda/human/*.fatbin 2>/dev/null)
for f in "$build/pcgrllm" "$build/pcgrllm_tests" "$build/libpcgrllm_cuda.so" "$build/cuda/reward_sample.fatbin" \
    ${modules:-"$build/cuda/human/scenario1.fatbin"}; do
    if [ ! -f "$f" ]; then
        echo "devkit: $f is missing (make devkit builds it; the CUDA library needs nvcc)" >&2
        exit 1
    fi
done
rm -rf "$kit"
mkdir -p "$kit/lib" "$kit/cuda/human" "$kit/rewards"
cp "$build/pcgrllm" "$build/pcgrllm_tests" "$build/libpcgrllm_cuda.so" "$kit/"
# the debug sections are most of the binaries' size and nothing on the GPU
# machine reads them (the symbol tables stay, for backtraces)
strip --strip-debug "$kit/pcgrllm" "$kit/pcgrllm_tests"
cp "$build/cuda/reward_sample.fatbin" "$kit/cuda/"
cp $modules "$kit/cuda/human/"
cp -r rewards/human rewards/engine "$kit/rewards/"
cp bench/device_check.sh "$kit/"
chmod +x "$kit/device_check.sh"

# The libraries: what the loader resolves for each ELF file here, less the
# base system's and the GPU machine's own.
base='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libresolv|libutil|libstdc\+\+|libgcc_s|libcuda|libcublas|libcublasLt|libnvrtc|libnvrtc-builtins)\.so'
for elf in "$kit/pcgrllm" "$kit/pcgrllm_tests" "$kit/libpcgrllm_cuda.so"; do
    ldd "$elf" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }'
done | sort -u | while read -r name path; do
    if echo "$name" | grep -Eq "$base"; then continue; fi
    cp -L "$path" "$kit/lib/$name"
done
# OpenBLAS is loaded through its alternatives link: keep the soname the
# binaries ask for (libopenblas.so.0 or libblas.so.3), which cp -L did.
# what glibc must be at least, so that a machine with an older one says so
for elf in "$kit/pcgrllm" "$kit/pcgrllm_tests" "$kit/libpcgrllm_cuda.so" "$kit"/lib/*; do
    objdump -T "$elf" 2>/dev/null | grep -o 'GLIBC_[0-9][0-9.]*'
done | sed 's/GLIBC_//' | sort -uV | tail -n 1 >"$kit/glibc_needed"
(cd "$kit" && tar -czf libs.tar.gz lib && rm -rf lib)

size=$(du -sk "$kit" | cut -f1)
echo "devkit: $kit ($((size / 1024)) MiB): pcgrllm, pcgrllm_tests, libpcgrllm_cuda.so, reward_sample.fatbin," \
    "$(echo "$modules" | wc -w) human reward modules, $(tar -tzf "$kit/libs.tar.gz" | grep -c '\.so') libraries," \
    "rewards/human, rewards/engine, device_check.sh (glibc $(cat "$kit/glibc_needed") or newer)"
if [ "$size" -gt 48000 ]; then
    echo "devkit: $kit is over 48 MiB: too close to what a lease carries (64 MiB with the tree)" >&2
    exit 1
fi
