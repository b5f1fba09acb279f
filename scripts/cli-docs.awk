# Reads one `framelift [COMMAND...] --help` (CLI11's layout: description, "Usage:" line, option
# groups, "Subcommands:", then the command's footer) and writes its man page (roff) to the file
# `man`. Prints "sub NAME" for each subcommand and "opt --NAME" for each long option: what
# scripts/cli-docs.sh walks next and puts in the bash completion.
#   awk -v path="models list" -v page=framelift-models-list -v version=X -v man=FILE -f cli-docs.awk

# Text for roff: a backslash is \e, and a line must not start with a control character.
function text(s) {
  gsub(/\\/, "\\e", s)
  if (s ~ /^[.']/) s = "\\&" s
  return s
}
# An option's name: its dashes are minus signs (\-), so that man pages can be searched for them.
function dashes(s) {
  gsub(/\\/, "\\e", s)
  gsub(/-/, "\\-", s)
  return s
}
function new_section(name, kind) {
  sections++
  sec_name[sections] = name
  sec_kind[sections] = kind
  entries[sections] = 0
}
function add_text(line) {
  if (sec_kind[sections] != "text") new_section("", "text")
  entries[sections]++
  body[sections, entries[sections]] = line
}
# "  -i,--input TEXT REQUIRED   Input video": CLI11 pads "  NAME" to `width` columns (its
# default, 30) and the description starts after them; a name that fills the column puts its
# description on the next lines instead (continuations), so only a space at the column's last
# place followed by text marks a description on the same line.
function add_entry(line) {
  entries[sections]++
  if (length(line) > width && substr(line, width, 1) == " " && substr(line, width + 1, 1) != " ") {
    name = substr(line, 3, width - 2)
    sub(/ +$/, "", name)
    names[sections, entries[sections]] = name
    body[sections, entries[sections]] = substr(line, width + 1)
  } else {
    names[sections, entries[sections]] = substr(line, 3)
    body[sections, entries[sections]] = ""
  }
}
function continue_entry(line) {
  sub(/^ +/, "", line)
  if (body[sections, entries[sections]] != "") line = "\n" line
  body[sections, entries[sections]] = body[sections, entries[sections]] line
}

BEGIN { width = 30; usage = ""; described = 0; sections = 0; footer = 0 }

usage == "" && /^Usage:/ { usage = $0; next }
usage == "" { if ($0 != "") description[++described] = $0; next }

# A header: "Options:", "Subcommands:", a group's name, or in the footer "Examples:".
/^[^ ].*:$/ {
  name = substr($0, 1, length($0) - 1)
  if (footer) new_section(name, "text")
  else if (name == "Subcommands") new_section(name, "subcommands")
  else if (name == "Positionals") new_section(name, "positionals")
  else new_section(name, "pending")  # options, or the footer's first header: the first entry says
  next
}
# Unindented prose: the footer has begun.
/^[^ ]/ { footer = 1; add_text($0); next }
/^$/ { if (sec_kind[sections] == "text") add_text(""); next }
sec_kind[sections] == "pending" { sec_kind[sections] = /^  -/ ? "options" : "text"; if (sec_kind[sections] == "text") footer = 1 }
sec_kind[sections] == "text" { add_text($0); next }
/^  [^ ]/ { add_entry($0); next }
/^   / { continue_entry($0); next }

END {
  upper = toupper(page)
  gsub(/-/, "\\-", upper)
  summary = description[1]
  sub(/^framelift: /, "", summary)
  print ".TH \"" upper "\" 1 \"\" \"framelift " version "\" \"framelift manual\"" > man
  print ".SH NAME" > man
  print dashes(page) " \\- " text(summary) > man
  # "Usage: framelift models list [OPTIONS] MODEL": the command in bold, its arguments after it.
  command = "framelift" (path == "" ? "" : " " path)
  args = usage
  sub(/^Usage: */, "", args)
  skip = split(command, _, " ")
  for (i = 0; i < skip; i++) sub(/^[^ ]+ ?/, "", args)
  print ".SH SYNOPSIS" > man
  print ".B " command > man
  if (args != "") print text(args) > man
  print ".SH DESCRIPTION" > man
  for (i = 1; i <= described; i++) print text(description[i]) > man
  options_open = 0
  for (s = 1; s <= sections; s++) {
    kind = sec_kind[s]
    if (kind == "options") {
      if (!options_open) print ".SH OPTIONS" > man
      if (sec_name[s] != "Options") print ".SS \"" text(sec_name[s]) "\"" > man
      options_open = 1
    } else if (kind == "positionals") print ".SH ARGUMENTS" > man
    else if (kind == "subcommands") print ".SH COMMANDS" > man
    else if (kind == "text") {
      heading = sec_name[s] == "" ? "NOTES" : toupper(sec_name[s])
      print ".SH \"" text(heading) "\"" > man
      print ".nf" > man
      for (j = 1; j <= entries[s]; j++) print text(body[s, j]) > man
      print ".fi" > man
      continue
    }
    for (j = 1; j <= entries[s]; j++) {
      name = names[s, j]
      description_lines = split(body[s, j], lines, "\n")
      print ".TP" > man
      if (kind == "subcommands") {
        print "\\fB" text(name) "\\fR" > man
        print "sub " name
        child[++children] = page "-" name
      } else {
        # "-i,--input TEXT REQUIRED": the flags in bold, what follows them in italics.
        at = index(name, " ")
        flags = at ? substr(name, 1, at - 1) : name
        value = at ? substr(name, at + 1) : ""
        n = split(flags, flag, ",")
        for (k = 1; k <= n; k++) if (flag[k] ~ /^--/) print "opt " flag[k]
        if (kind == "positionals") line = "\\fI" text(flags) "\\fR"
        else line = "\\fB" dashes(flags) "\\fR"
        gsub(/,/, ", ", line)
        if (value != "") line = line " \\fI" text(value) "\\fR"
        print line > man
      }
      for (k = 1; k <= description_lines; k++) {
        if (k > 1) print ".br" > man
        print text(lines[k]) > man
      }
      if (kind == "subcommands") print ".br\nSee \\fB" dashes(page "-" name) "\\fR(1)." > man
    }
  }
  print ".SH \"SEE ALSO\"" > man
  see = ""
  if (path != "") {
    parent = "framelift " path
    sub(/ [^ ]+$/, "", parent)
    gsub(/ /, "-", parent)
    see = "\\fB" dashes(parent) "\\fR(1)"
  }
  for (c = 1; c <= children; c++) see = see (see == "" ? "" : ", ") "\\fB" dashes(child[c]) "\\fR(1)"
  if (see == "") see = "\\fBframelift\\fR(1)"
  print see > man
  close(man)
}
