"""
From the name a user gives a biLM to its files, before any of them is read: the name grammar
and `resolve_bilm` (`names`), the formats told apart by their files (`bilm_formats`), the
published biLMs (`published_models`), `elmo_plugin://` package files, the download cache and
`fetch` (`package_files`), and TF-Hub's `.tar.gz` modules unpacked into that cache
(`tar_archives`). It imports no codec (the readers import it), only the core's error and
`files`.
"""
