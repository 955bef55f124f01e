"""What a command shows on the terminal it runs in, apart from its output: the progress bar."""
