from tritonlint.cli import main

main()
