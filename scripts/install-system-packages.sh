#!/usr/bin/env bash
# Installs the Debian packages DiskLab's tools and tests use, when running as root and missing.
# Why a script: a fresh machine has none of fio, bonnie++, iozone3 (non-free), xfsprogs, btrfs-progs
# or xvfb, and CI runs on such machines. Idempotent: does nothing when everything is there.
set -euo pipefail

PACKAGES=(fio bonnie++ iozone3 xfsprogs btrfs-progs e2fsprogs util-linux xvfb xauth
    # a user who is not root runs DiskLab on Debian's python3 in the privilege tests
    python3 passwd
    # the safety tests build LVM and md members; the privileged helper is tested through sudo
    lvm2 dmsetup mdadm sudo
    # Qt's xcb platform plugin (the window under Xvfb and on X11 desktops)
    libxcb-icccm4 libxcb-keysyms1 libxcb-cursor0 libxcb-image0 libxcb-render-util0
    libxcb-xkb1 libxkbcommon-x11-0 libegl1 libfontconfig1 libdbus-1-3
    # the packaging tests check the installed files as distributions do: desktop-file-validate,
    # appstreamcli, xmllint, man, and the completions in bash, zsh and fish; they build the
    # wheel from a git listing and stage `make install`
    desktop-file-utils appstream libxml2-utils man-db zsh fish git make
    # the real-input GUI test presses keys and clicks in the window on Xvfb
    xdotool
    # a test counts the library's fsyncs during a run (the system calls, as the kernel saw them)
    strace
    # hosts started over SSH: the client here, and the tests' own sshd on a loopback port
    openssh-client openssh-server
    # several targets: GPT partitions of a scratch image or a device (sgdisk; partx is in
    # util-linux)
    gdisk
    # the export tests render the charts' SVG with librsvg and the HTML report with Chromium
    librsvg2-bin chromium
    # bench/README.md: block I/O traced by task and sector (perf record -e block:block_rq_issue)
    linux-perf
    # the engine's accounting loop in C (disklab/engine/_native.c), built by make setup
    gcc libc6-dev python3-dev)

if [ "$(id -u)" != 0 ]; then
    echo "install-system-packages: not root; install these yourself: ${PACKAGES[*]}" >&2
    exit 0
fi

missing=()
for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

# iozone3 lives in Debian's non-free component: add it next to the stock sources, same archive.
nonfree=/etc/apt/sources.list.d/disklab-debian-non-free.sources
if [[ " ${missing[*]} " == *" iozone3 "* ]] && [ ! -f "$nonfree" ] && [ -f /etc/apt/sources.list.d/debian.sources ]; then
    uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
    suite=$(awk '/^Suites:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
    cat > "$nonfree" <<SRC
Types: deb
URIs: ${uri:-http://deb.debian.org/debian}
Suites: ${suite:-bookworm}
Components: non-free
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
