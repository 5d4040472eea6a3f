{
  "targets": [
    {
      "target_name": "resident_pages",
      "sources": ["resident_pages.c"],
      "cflags": ["-Wall", "-Wextra", "-Wno-unused-parameter"],
      "conditions": [["OS!='linux'", {"type": "none"}]]
    }
  ]
}
