#!/usr/bin/env bash
# Man pages and bash completion written from the built CLI's own --help, so that neither can
# drift from the options the program really takes (the deb target runs it; cmake/package.cmake).
#   scripts/cli-docs.sh FRAMELIFT_BINARY OUT_DIR
# OUT_DIR/man1/: framelift.1.gz, and one page per subcommand at any depth, named by its path
# (framelift-upscale.1.gz, framelift-models-list.1.gz, ...). OUT_DIR/completion/framelift: a bash
# completion of the subcommands and their long options; files otherwise (complete -o default).
set -euo pipefail
cli=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
version=$("$cli" --version)
version=${version#framelift }
tmp=$out.tmp
rm -rf "$tmp"
mkdir -p "$tmp/man1" "$tmp/completion"

# One page per command path; the help of each names its subcommands, which are walked in turn.
queue=("")
cases=""
while [ ${#queue[@]} -gt 0 ]; do
  path=${queue[0]}
  queue=("${queue[@]:1}")
  # shellcheck disable=SC2086  # the path is words: `framelift models list --help`
  help=$(exec -a framelift "$cli" $path --help)  # argv[0] is the name in "Usage:"
  page=framelift${path:+-${path// /-}}
  words=$(awk -v path="$path" -v page="$page" -v version="$version" -v man="$tmp/man1/$page.1" \
    -f "$here/cli-docs.awk" <<<"$help")
  subs=$(awk '$1 == "sub" { printf "%s ", $2 }' <<<"$words")
  opts=$(awk '$1 == "opt" { printf "%s ", $2 }' <<<"$words")
  cases+="    \"$path\") subs=\"${subs% }\" opts=\"${opts% }\" ;;"$'\n'
  for s in $subs; do queue+=("${path:+$path }$s"); done
done

cat >"$tmp/completion/framelift" <<EOF
# bash completion for framelift $version: the subcommands and long options of each command.
# Written by scripts/cli-docs.sh from \`framelift --help\`; do not edit.
_framelift_words() {
  case "\$1" in
$cases    *) subs="" opts="" ;;
  esac
}

_framelift() {
  local cur=\${COMP_WORDS[COMP_CWORD]} path="" word i subs opts
  # The command path so far: the words before the cursor that name a subcommand of the path.
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=\${COMP_WORDS[i]}
    _framelift_words "\$path"
    case " \$subs " in *" \$word "*) path=\${path:+\$path }\$word ;; esac
  done
  _framelift_words "\$path"
  COMPREPLY=()
  if [[ \$cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "\$opts" -- "\$cur")
  elif [ -n "\$subs" ]; then
    mapfile -t COMPREPLY < <(compgen -W "\$subs" -- "\$cur")
  fi
}
complete -o default -F _framelift framelift
EOF

# Compressed as Debian ships man pages; -n keeps the package reproducible (no name or time).
gzip -9n "$tmp"/man1/*.1
rm -rf "$out"
mv "$tmp" "$out"
echo "cli-docs: $(find "$out/man1" -name '*.1.gz' | wc -l) man pages and a bash completion in $out"
