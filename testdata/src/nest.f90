! Fortran: internal procedures (contains), a statement function, array syntax lowered to loops, an OpenMP loop.
program nest
  implicit none
  integer, parameter :: n = 300
  real(8) :: a(n), b(n), c(n), m(n, n)
  real(8) :: s, t
  integer :: i, j, seed, nargs
  character(len=32) :: arg

  seed = 3
  nargs = command_argument_count()
  if (nargs >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) seed
  end if

  do i = 1, n
    b(i) = mod(i * seed, 17) * 0.25d0
    c(i) = mod(i + seed, 5) * 1.0d0
  end do
  ! Array syntax: the compiler generates the loops.
  a(:) = b(:) * 2 + c(:)
  a(2:n) = a(2:n) + 0.5d0 * a(1:n-1)
  t = sum(a * b) + maxval(c)

  call fill(m, seed)

  s = 0.0d0
!$omp parallel do reduction(+:s) private(j)
  do i = 1, n
    do j = 1, n
      s = s + m(j, i) * a(j)
    end do
  end do
!$omp end parallel do

  print '(a, f14.3, a, f12.3, a, f12.3)', 's=', s, ' t=', t, ' tot=', total(c)

contains

  ! Internal procedure with a statement function.
  subroutine fill(x, k)
    real(8), intent(out) :: x(:, :)
    integer, intent(in) :: k
    real(8) :: sq, u
    integer :: p, q
    sq(u) = u * u + 1.0d0
    do q = 1, size(x, 2)
      do p = 1, size(x, 1)
        x(p, q) = sq(dble(mod(p + q * k, 23))) / n
      end do
    end do
  end subroutine fill

  ! Internal function reading the host's variable n.
  real(8) function total(v)
    real(8), intent(in) :: v(:)
    integer :: k
    total = 0.0d0
    do k = 1, size(v)
      if (v(k) > 0) total = total + v(k) / n
    end do
  end function total

end program nest
