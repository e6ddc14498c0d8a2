#!/bin/sh
# Refreshes the Simplified Chinese translation file from the sources: texts new
# in tr(), QT_TRANSLATE_NOOP or PIPELAB_TRANSLATABLE (core's texts that the app
# shows) are added as unfinished, texts no longer in the sources are dropped.
# Translate the unfinished ones with Qt Linguist (linguist-qt6) or by hand;
# ui_translations_test lists them.
#   ui/translations/update_translations.sh [TS_FILE]   (default: the repository's)
# LUPDATE names Qt 6's lupdate when it is not in Debian's Qt 6 folder (a bare
# `lupdate` on the PATH may be Qt 5's, through qtchooser).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
ts=${1:-$root/ui/translations/pipelab_zh_CN.ts}
lupdate=${LUPDATE:-/usr/lib/qt6/bin/lupdate}
cd "$root"
# No line numbers in the file: edits elsewhere in a source then leave it alone.
"$lupdate" -silent -locations none -no-obsolete -extensions cpp,h \
  -tr-function-alias QT_TRANSLATE_NOOP+=PIPELAB_TRANSLATABLE \
  -source-language en -target-language zh_CN -I . ui core -ts "$ts"
