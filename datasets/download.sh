#!/usr/bin/env bash
# Downloads MNIST or Fashion-MNIST (the four gzip IDX files) into a folder and
# checks every file's SHA-256 checksum. Needs bash, curl or wget, and one of
# sha256sum, shasum or openssl.
#
#   datasets/download.sh mnist ~/data/mnist
#   datasets/download.sh fashion-mnist ~/data/fashion-mnist
#   datasets/download.sh all ~/data               # into ~/data/mnist and ~/data/fashion-mnist
#   datasets/download.sh --verify-only mnist ~/data/mnist   # check files already there
#
# Point an experiment's data.path at the folder (source "mnist" or "fashion-mnist").
# Files already present with the right checksum are not downloaded again.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: download.sh [--verify-only] <mnist|fashion-mnist|all> <folder>

Downloads the data set's four files (train-images-idx3-ubyte.gz,
train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz)
into <folder> and verifies their SHA-256 checksums. "all" puts MNIST into
<folder>/mnist and Fashion-MNIST into <folder>/fashion-mnist.

--verify-only  download nothing: check the files already in <folder>; fails
               when none is there or any checksum differs.
USAGE
}

fail() {
  echo "download.sh: error: $*" >&2
  exit 1
}

FILES="train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz"

# SHA-256 sums of the published files. Both sets are listed, with sizes, in
# TensorFlow Datasets' url_checksums (github.com/tensorflow/datasets:
# tensorflow_datasets/url_checksums/mnist.txt and fashion_mnist.txt). The MNIST
# t10k sums also match the SHA256SUMS shipped with the project's shared copy.
expected_sha256() {  # <dataset> <file>
  case "$1/$2" in
    mnist/train-images-idx3-ubyte.gz) echo 440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609 ;;
    mnist/train-labels-idx1-ubyte.gz) echo 3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c ;;
    mnist/t10k-images-idx3-ubyte.gz) echo 8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6 ;;
    mnist/t10k-labels-idx1-ubyte.gz) echo f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6 ;;
    fashion-mnist/train-images-idx3-ubyte.gz) echo 3aede38d61863908ad78613f6a32ed271626dd12800ba2636569512369268a84 ;;
    fashion-mnist/train-labels-idx1-ubyte.gz) echo a04f17134ac03560a47e3764e11b92fc97de4d1bfaf8ba1a3aa29af54cc90845 ;;
    fashion-mnist/t10k-images-idx3-ubyte.gz) echo 346e55b948d973a97e58d2351dde16a484bd415d4595297633bb08f03db6a073 ;;
    fashion-mnist/t10k-labels-idx1-ubyte.gz) echo 67da17c76eaffca5446c3361aaab5c3cd6d1c2608764d35dfb1850b086bf8dd5 ;;
    *) return 1 ;;
  esac
}

# Where the files are published, tried in order. yann.lecun.com often refuses
# downloads now, so the mirrors that torchvision and TensorFlow use come first.
# PIPELAB_DATASET_MIRROR replaces the list with one URL of your own (any URL
# curl or wget understands, e.g. a local file:///... folder).
mirrors() {  # <dataset>
  if [ -n "${PIPELAB_DATASET_MIRROR:-}" ]; then
    echo "${PIPELAB_DATASET_MIRROR%/}"
    return
  fi
  case "$1" in
    mnist)
      echo https://ossci-datasets.s3.amazonaws.com/mnist
      echo https://storage.googleapis.com/cvdf-datasets/mnist
      echo http://yann.lecun.com/exdb/mnist
      ;;
    fashion-mnist)
      echo http://fashion-mnist.s3-website.eu-central-1.amazonaws.com
      echo https://raw.githubusercontent.com/zalandoresearch/fashion-mnist/master/data/fashion
      ;;
  esac
}

sha256_of() {  # <file>
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d' ' -f1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d' ' -f1
  elif command -v openssl >/dev/null 2>&1; then
    openssl dgst -sha256 "$1" | sed 's/^.*= *//'
  else
    fail "no SHA-256 tool found: install coreutils (sha256sum), perl (shasum) or openssl"
  fi
}

checksum_ok() {  # <dataset> <official file name> <path>
  [ "$(sha256_of "$3")" = "$(expected_sha256 "$1" "$2")" ]
}

fetch() {  # <url> <destination>
  if command -v curl >/dev/null 2>&1; then
    curl --fail --location --silent --show-error --connect-timeout 20 --retry 2 -o "$2" "$1"
  elif command -v wget >/dev/null 2>&1; then
    wget --quiet --timeout=20 --tries=3 -O "$2" "$1"
  else
    fail "neither curl nor wget is installed; install one of them and run again"
  fi
}

# Checks the files already in <folder>: 0 when at least one is there and all
# present ones match, 1 otherwise.
verify_folder() {  # <dataset> <folder>
  local dataset=$1 folder=$2 found=0 bad=0 file
  for file in $FILES; do
    if [ ! -f "$folder/$file" ]; then
      echo "  missing  $file"
      continue
    fi
    found=$((found + 1))
    if checksum_ok "$dataset" "$file" "$folder/$file"; then
      echo "  ok       $file"
    else
      echo "  MISMATCH $file (expected sha256 $(expected_sha256 "$dataset" "$file"))"
      bad=$((bad + 1))
    fi
  done
  if [ "$found" -eq 0 ]; then
    echo "download.sh: error: no $dataset files in $folder" >&2
    return 1
  fi
  if [ "$bad" -gt 0 ]; then
    echo "download.sh: error: $bad $dataset file(s) in $folder have the wrong checksum" >&2
    return 1
  fi
  echo "$found $dataset file(s) in $folder verified"
}

download_dataset() {  # <dataset> <folder>
  local dataset=$1 folder=$2 file mirror partial saved fetched
  command -v curl >/dev/null 2>&1 || command -v wget >/dev/null 2>&1 ||
    fail "neither curl nor wget is installed; install one of them and run again"
  mkdir -p "$folder" || fail "cannot create folder $folder"
  for file in $FILES; do
    if [ -f "$folder/$file" ] && checksum_ok "$dataset" "$file" "$folder/$file"; then
      echo "  ok       $file (already there)"
      continue
    fi
    partial="$folder/$file.part"
    saved=no
    fetched=no
    for mirror in $(mirrors "$dataset"); do
      echo "  fetching $mirror/$file"
      if fetch "$mirror/$file" "$partial"; then
        fetched=yes
        if checksum_ok "$dataset" "$file" "$partial"; then
          mv "$partial" "$folder/$file"
          saved=yes
          echo "  ok       $file"
          break
        fi
        echo "  checksum mismatch for the copy from $mirror"
      fi
      rm -f "$partial"
    done
    if [ "$saved" = no ] && [ "$fetched" = yes ]; then
      fail "$file: no mirror served a copy with the expected checksum $(expected_sha256 "$dataset" "$file")"
    fi
    [ "$saved" = yes ] || fail "could not download $file from any mirror; is the network reachable?"
  done
  echo "$dataset is in $folder"
}

verify_only=0
if [ "${1:-}" = "--verify-only" ]; then
  verify_only=1
  shift
fi
case "${1:-}" in
  -h|--help) usage; exit 0 ;;
esac
[ $# -eq 2 ] || { usage >&2; exit 2; }
dataset=$1
folder=$2

case "$dataset" in
  mnist|fashion-mnist) targets="$dataset:$folder" ;;
  all) targets="mnist:$folder/mnist fashion-mnist:$folder/fashion-mnist" ;;
  *) fail "unknown data set '$dataset': use mnist, fashion-mnist or all" ;;
esac

status=0
for target in $targets; do
  name=${target%%:*}
  path=${target#*:}
  if [ "$verify_only" -eq 1 ]; then
    echo "verifying $name in $path"
    verify_folder "$name" "$path" || status=1
  else
    echo "downloading $name into $path"
    download_dataset "$name" "$path"
  fi
done
exit "$status"
