from contrastgen.cli import main

main()
