"""The contrast-set viewer: `bundle` cuts an output into the page's data, `site` writes the static
site, `app` serves it (`contrastgen view`, and /viewer in `contrastgen serve`)."""
