"""Files in and out, safely: inputs read within limits (`limits`), outputs written whole or not
at all (`atomic`), and temporary files that a killed run cannot leak (`scratch`)."""
