from tritonlint.replay import main

main()
